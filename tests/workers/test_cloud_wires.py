"""A worker serves the clouds' wires and the local servers as it serves the seven: a camera turn
submitted on each reaches the model with its image, through the simulator at each one's own
address, and its record verifies against today's engine."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from fuseforks.engine.replay import verify
from fuseforks.events.codec import encode_event
from fuseforks.events.types import RequestSent, TurnEnded, TurnStarted
from fuseforks.jetstream.work import WorkRequest
from fuseforks.simulator import WIRE_PREFIXES
from tests.wires.helpers import MODEL_OF
from tests.workers.harness import Cluster
from tests.workers.nats_server import Given, NatsServer

WIRES = ["bedrock-converse", "vertex-gemini", "vertex-anthropic", "azure-chat",
         "azure-responses", "ollama", "vllm", "llamacpp", "lmstudio"]
KEYS = {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-worker-key", "AZURE_OPENAI_API_KEY": "azure-worker"}


def test_a_camera_turn_on_every_cloud_and_local_wire_runs_on_a_worker(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in KEYS.items():
        monkeypatch.setenv(variable, value)
    with Cluster(pg_url, nats.url, tmp_path) as cluster:
        addresses = [option for wire in WIRES for option in
                     ("--base-url", f"{wire}={cluster.base_url}{WIRE_PREFIXES[wire]}")]
        cluster.start_worker("w1", *addresses)
        cluster.submit([WorkRequest(turn_id=f"turn-{wire}", wire=wire, model=MODEL_OF[wire],
                                    request="Look at the camera.", agent="cloud")
                        for wire in WIRES])
        cluster.wait_for(lambda: cluster.counts() == (len(WIRES), len(WIRES)), 120,
                         "every turn to end")
        turns = cluster.turns()
    assert sorted(turns) == sorted(f"turn-{wire}" for wire in WIRES)
    for wire in WIRES:
        events = turns[f"turn-{wire}"]
        started, ended = events[0].event, events[-1].event
        assert isinstance(started, TurnStarted) and isinstance(ended, TurnEnded)
        assert (started.wire, started.model, started.worker) == (wire, MODEL_OF[wire], "w1")
        assert ended.stop == "answered", wire
        assert ended.answer.startswith("I see 1 image. image 1: left half "), (wire, ended.answer)
        carried = [image for e in events if isinstance(e.event, RequestSent)
                   for image in e.event.images]
        assert len(carried) == 1, wire
        verification = anyio.run(verify, events)
        assert verification.divergence is None, (wire, verification.divergence)
        recorded = b"".join(encode_event(e.event) for e in events)
        assert not [key for key in KEYS.values() if key.encode() in recorded], wire
