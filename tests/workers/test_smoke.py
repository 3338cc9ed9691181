"""One worker at a time: a submitted turn end to end, hostile requests, a clean shutdown."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import sys
from pathlib import Path

import anyio
from PIL import Image

from fuseforks.engine.replay import verify
from fuseforks.events.types import TurnEnded, TurnNotStarted, TurnStarted, TurnTakenOver
from fuseforks.jetstream.streams import WORK_SUBJECT, connect, ensure_streams
from fuseforks.jetstream.work import WorkRequest
from fuseforks.stores.leases import Held, LeaseTable
from fuseforks.stores.postgres import PostgresStore
from tests.helpers import processes
from tests.workers.harness import Cluster
from tests.workers.nats_server import Given, NatsServer


def test_a_submitted_turn_runs_on_a_worker_and_submit_wait_prints_it(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    with Cluster(pg_url, nats.url, tmp_path) as cluster:
        cluster.start_worker("w1")
        done = processes.run(
            [sys.executable, "-m", "fuseforks", "submit", "--nats", nats.url,
             "--wire", "anthropic", "--model", "claude-sonnet-5-5", "--agent", "smoke",
             "--wait", "Look at the camera."],
            capture_output=True, text=True, timeout=60, env=os.environ)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        turn_id = lines[0]
        assert turn_id.startswith("turn-")
        assert lines[1:] == [
            "tool: agent=smoke round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
            "turn: agent=smoke backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=answered",
            lines[-1],
        ]
        assert lines[-1].startswith("I see 1 image.")
        (events,) = cluster.turns().values()
        assert events[-1].event.answer == lines[-1]


def test_a_request_cannot_choose_the_endpoint_and_an_unknown_wire_is_recorded_as_an_error(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    """A request that carries an endpoint and a key (a submitter trying to point the worker's key
    at its own server) runs against the worker's own endpoint; a wire the worker cannot serve is
    a turn that ended in an error, not a request lost."""
    hostile = {"turn_id": "turn-hostile", "wire": "anthropic", "model": "claude-sonnet-5-5",
               "request": "Look at the camera.", "agent": "h",
               "base_url": "http://127.0.0.1:9/steal", "api_key": "sk-submitter"}
    png = io.BytesIO()
    Image.new("RGB", (8, 8), (255, 0, 0)).save(png, "PNG")
    pasted = base64.b64encode(png.getvalue()).decode()  # an image pasted into the text
    unknown = {"turn_id": "turn-unknown", "wire": "carrier-pigeon", "model": "m",
               "request": f"hello {pasted}", "agent": "u"}

    async def publish() -> None:
        connection = await connect(nats.url)
        js = connection.jetstream()
        await ensure_streams(js)
        for body in (hostile, unknown):
            await js.publish(WORK_SUBJECT, json.dumps(body).encode())
        await connection.close()

    with Cluster(pg_url, nats.url, tmp_path) as cluster:
        cluster.start_worker("w1")
        anyio.run(publish)
        cluster.wait_for(lambda: cluster.counts() == (2, 2), 60, "both turns to end")
        turns = cluster.turns()
        received = cluster.received()
    ended = turns["turn-hostile"][-1].event
    assert isinstance(ended, TurnEnded) and ended.stop == "answered"
    assert turns["turn-hostile"][0].event.endpoint_host == "127.0.0.1"  # type: ignore[union-attr]
    assert len(received) == 2  # both requests reached the worker's simulator, none went to :9
    assert [type(e.event) for e in turns["turn-unknown"]] == [TurnNotStarted, TurnEnded]
    started = turns["turn-unknown"][0].event
    assert isinstance(started, TurnNotStarted) and started.request.startswith("hello ")
    assert (started.wire, started.model, started.agent) == ("carrier-pigeon", "m", "u")
    assert pasted not in started.request and pasted[:40] not in started.request
    refused = turns["turn-unknown"][-1].event
    assert isinstance(refused, TurnEnded) and refused.stop == "error"
    assert refused.error.startswith("unknown wire 'carrier-pigeon'"), refused.error


def test_sigterm_hands_a_running_turn_back_and_another_worker_finishes_it(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    request = WorkRequest(turn_id="turn-handed-back", wire="anthropic",
                          model="claude-sonnet-5-5", request="Look at the camera.", agent="hb")
    with Cluster(pg_url, nats.url, tmp_path, latency=3.0) as cluster:
        cluster.start_worker("w1", "--grace", "0.5")
        cluster.submit([request])
        cluster.wait_for(lambda: cluster.counts() == (1, 0), 60, "the turn to start")
        cluster.kill("w1", signal.SIGTERM)
        assert cluster.workers["w1"].wait(timeout=30) == 0, cluster.stderr("w1")
        assert "handing back 1 running turns: turn-handed-back\n" in cluster.stderr("w1")
        kept = cluster.turns()["turn-handed-back"]
        assert not isinstance(kept[-1].event, TurnEnded)  # handed back: no end recorded
        cluster.start_worker("w2")
        cluster.wait_for(lambda: cluster.counts() == (1, 1), 60, "w2 to finish the turn")
        events = cluster.turns()["turn-handed-back"]
    assert events[: len(kept)] == kept
    taken = [e.event for e in events if isinstance(e.event, TurnTakenOver)]
    assert [t.worker for t in taken] == ["w2"]
    assert isinstance(events[-1].event, TurnEnded) and events[-1].event.stop == "answered"
    assert anyio.run(verify, events).identical


def test_a_turn_another_worker_holds_is_not_run_twice(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    """A request delivered again while the worker running it is alive (its signs of life were
    lost on the way) finds the turn's lease taken: it waits in the queue and runs only once the
    lease is free."""
    request = WorkRequest(turn_id="turn-held", wire="anthropic", model="claude-sonnet-5-5",
                          request="Look at the camera.", agent="held")
    with Cluster(pg_url, nats.url, tmp_path) as cluster:
        PostgresStore(pg_url).close()  # the store's tables, its leases' among them
        table = LeaseTable(pg_url)
        held = table.take("turn:turn-held", "w0", 3600)  # as the first worker's would be
        assert held is not None
        cluster.start_worker("w1")
        cluster.submit([request])
        cluster.wait_for(lambda: "turn turn-held is running elsewhere" in cluster.stderr("w1"),
                         30, "the worker to find the lease taken")
        assert cluster.counts() == (0, 0) and cluster.received() == []
        table.release("w0", [Held(name="turn:turn-held", epoch=held.epoch)])
        table.close()
        cluster.wait_for(lambda: cluster.counts() == (1, 1), 60, "the turn to run")
        events = cluster.turns()["turn-held"]
    assert isinstance(events[-1].event, TurnEnded) and events[-1].event.stop == "answered"
    assert [type(e.event) for e in events].count(TurnStarted) == 1
