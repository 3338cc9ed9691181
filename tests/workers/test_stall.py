"""A worker that is stopped, not dead (SIGSTOP: a paused VM, a frozen container, a debugger)
loses its turns: once its lease runs out another worker takes the turn over and finishes it, and
when the stopped one is continued it does nothing more — its late appends are refused by the
lease's epoch, so no request or tool call of it follows, and no tool runs twice."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import anyio
import pytest

from fuseforks.engine.replay import verify
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    RequestSent,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.jetstream.work import WorkRequest
from tests.workers.harness import Cluster
from tests.workers.nats_server import Given, NatsServer

TURN = "turn-stall"


def recorded(kind: type, round_: int | None = None) -> Callable[[list[Envelope]], bool]:
    """The record holds an event of `kind` (of round `round_`, when given)."""
    def found(events: list[Envelope]) -> bool:
        return any(isinstance(e.event, kind)
                   and (round_ is None or getattr(e.event, "round", None) == round_)
                   for e in events)
    return found


class Stage(NamedTuple):
    latency: float
    """Seconds the simulated provider takes to answer."""
    rounds: int
    gate: bool
    """The camera hands its frames back at once (else when the test opens its shutter)."""
    at: Callable[[list[Envelope]], bool]
    """Where in the record the worker is stopped."""


STAGES = {
    # stopped while its request waits on the provider: the answer it gets later is not stored
    "waiting on the provider": Stage(2.0, 1, True, recorded(RequestSent, 1)),
    # stopped while the camera takes the frame: the new owner does not call it again
    "during a tool call": Stage(0.2, 1, False, recorded(ToolCalled, 1)),
    # stopped right after a round's result is committed, before the next request
    "between rounds": Stage(0.8, 2, True, recorded(ToolResultRecorded, 1)),
}


@pytest.mark.parametrize("stage", list(STAGES))
def test_a_stopped_worker_loses_its_turn_and_does_nothing_once_continued(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path, stage: str) -> None:
    how = STAGES[stage]
    request = WorkRequest(turn_id=TURN, wire="anthropic", model="claude-sonnet-5-5",
                          request="Look at the camera.", agent="stall")
    with Cluster(pg_url, nats.url, tmp_path, latency=how.latency, rounds=how.rounds,
                 shutter=True) as cluster:
        if how.gate:
            cluster.open_shutter()
        cluster.start_workers("w1", "w2")
        cluster.submit([request])

        def record() -> list[Envelope]:
            return cluster.turns().get(TURN, [])

        cluster.wait_for(lambda: how.at(record()), 60, f"the turn to reach: {stage}")
        started = record()[0].event
        assert isinstance(started, TurnStarted)
        victim = started.worker
        (survivor,) = {"w1", "w2"} - {victim}
        stopped_at = time.time()
        cluster.kill(victim, signal.SIGSTOP)
        try:
            cluster.wait_for(lambda: recorded(TurnTakenOver)(record()), 60,
                             "another worker to take the turn over")
            if not how.gate:
                cluster.open_shutter()  # the stopped worker's frame may come back now
        finally:
            cluster.kill(victim, signal.SIGCONT)
        cluster.wait_for(lambda: recorded(TurnEnded)(record()), 120, "the turn to end")
        cluster.wait_for(lambda: "another worker took it over" in cluster.stderr(victim), 60,
                         "the continued worker to find its turn taken")
        ended = record()
        time.sleep(2.0)  # whatever the continued worker would still do, it would do by now
        events = record()
        said = cluster.stderr(victim)
        shots = cluster.shots()
    assert events == ended  # nothing of the continued worker's landed after the end
    (taken,) = [e for e in events if isinstance(e.event, TurnTakenOver)]
    assert isinstance(taken.event, TurnTakenOver)
    assert (taken.event.worker, taken.event.taken_from) == (survivor, victim)
    stall = datetime.fromisoformat(taken.at).timestamp() - stopped_at
    assert 0 < stall < 10, stall  # exact figures: benchmarks/bench_takeover.py
    last = events[-1].event
    assert isinstance(last, TurnEnded) and last.stop == "answered"
    assert anyio.run(verify, events).identical
    calls = [e.event for e in events if isinstance(e.event, ToolCalled)]
    assert shots == len(calls)  # every frame the record asked for, taken once: none twice
    assert (f"worker {victim}: turn {TURN}: another worker took it over (its lease ran out "
            "under epoch 1); stopped here, nothing more of it recorded or called by this "
            "worker") in said
