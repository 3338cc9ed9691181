"""The turn of a worker that was killed is taken over in seconds: the others notice it fell
silent and find its turn's lock free, and hand its request back to the queue at once, instead of
waiting for the queue's ack wait."""

from __future__ import annotations

import signal
import time
from datetime import datetime
from pathlib import Path

import anyio

from fuseforks.engine.replay import verify
from fuseforks.events.types import TurnEnded, TurnStarted, TurnTakenOver
from fuseforks.jetstream.work import ACK_WAIT, WorkRequest
from tests.workers.harness import Cluster
from tests.workers.nats_server import Given, NatsServer


def test_the_turn_of_a_killed_worker_is_taken_over_before_the_ack_wait(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    request = WorkRequest(turn_id="turn-killed", wire="anthropic", model="claude-sonnet-5-5",
                          request="Look at the camera.", agent="k")
    with Cluster(pg_url, nats.url, tmp_path, latency=1.5) as cluster:
        cluster.start_workers("w1", "w2")
        cluster.submit([request])
        cluster.wait_for(lambda: cluster.counts()[0] == 1, 60, "the turn to start")
        started = cluster.turns()["turn-killed"][0].event
        assert isinstance(started, TurnStarted)
        victim = started.worker  # its first request waits on the provider for 1.5 s
        (survivor,) = {"w1", "w2"} - {victim}
        killed_at = time.time()
        cluster.kill(victim)
        assert cluster.workers[victim].wait(timeout=30) == -signal.SIGKILL
        cluster.wait_for(lambda: cluster.counts() == (1, 1), 120, "the turn to end")
        events = cluster.turns()["turn-killed"]
        said = cluster.stderr(survivor)
    (taken,) = [e for e in events if isinstance(e.event, TurnTakenOver)]
    assert isinstance(taken.event, TurnTakenOver)
    assert (taken.event.worker, taken.event.taken_from) == (survivor, victim)
    latency = datetime.fromisoformat(taken.at).timestamp() - killed_at
    assert 0 < latency < ACK_WAIT, latency  # generous: exact figures in bench_takeover
    assert (f"worker {survivor}: worker {victim} fell silent; its turns go back to the queue: "
            "turn-killed") in said
    assert f"worker {survivor}: taking over turn-killed from {victim} after seq " in said
    assert isinstance(events[-1].event, TurnEnded) and events[-1].event.stop == "answered"
    assert anyio.run(verify, events).identical
