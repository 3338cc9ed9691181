"""Forty turns with images on two worker processes, one of them SIGKILLed while turns are in
flight: real PostgreSQL, real NATS with JetStream, the simulator and the demo camera.

What must hold afterwards, for every turn:
- it ended exactly once in the store, and its seqs run 1..n without a gap or a copy;
- it verifies with `replay --verify` (the taken-over ones through the CLI as well);
- no request with a recorded answer reached the provider twice: among the simulator's recorded
  bodies of each turn, only a request the dead worker left unanswered may come twice, and there
  are as many bodies as the turn's `RequestSent` events, less at most one per such request (the
  dead worker committed it but never sent it);
- `fuseforks log --follow`, started before the run, printed each of its lines exactly once.
"""

from __future__ import annotations

import itertools
import signal
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import anyio

from fuseforks.engine.replay import verify
from fuseforks.events.types import RequestSent, TurnEnded, TurnStarted, TurnTakenOver
from fuseforks.jetstream.work import WorkRequest
from fuseforks.projections.log import short_turn_id, turn_log
from tests.helpers import processes
from tests.stores.parity import assert_rows_are_the_folds
from tests.workers.harness import MODELS, WIRES, Cluster
from tests.workers.nats_server import Given, NatsServer

N = 40


def text_of(index: int) -> str:
    return f"Look at the camera ({index})."


def test_forty_turns_survive_a_worker_killed_mid_run(pg_url: str, nats: NatsServer | Given,
                                                     tmp_path: Path) -> None:
    run = uuid.uuid4().hex[:8]
    requests = [WorkRequest(turn_id=f"turn-{run}-{i:02d}", wire=WIRES[i % len(WIRES)],
                            model=MODELS[WIRES[i % len(WIRES)]], agent=f"a{i:02d}",
                            request=text_of(i)) for i in range(N)]
    with Cluster(pg_url, nats.url, tmp_path, latency=0.3, exposure=0.2, rounds=2,
                 concurrency=4) as cluster:
        cluster.start_follower()
        cluster.start_worker("w1")
        cluster.start_worker("w2")
        cluster.submit(requests)

        def in_flight() -> int:
            begun, ended = cluster.counts()
            return begun - ended

        cluster.wait_for(lambda: in_flight() >= 6, 60, "turns in flight")
        relaying = "relaying the store's events to the bus"
        assert relaying in cluster.stderr("w1") and relaying not in cluster.stderr("w2")
        cluster.kill("w1")
        assert cluster.workers["w1"].wait(timeout=10) == -signal.SIGKILL
        cluster.wait_for(lambda: cluster.counts() == (N, N), 180, "every turn to end")
        assert relaying in cluster.stderr("w2")  # the relay of the living worker took over
        cluster.kill("w2", signal.SIGTERM)
        assert cluster.workers["w2"].wait(timeout=60) == 0, cluster.stderr("w2")
        turns = cluster.turns()
        expected = [f"{short_turn_id(turn_id)} {line}" for turn_id, t in turns.items()
                    for line in turn_log(t)]
        cluster.wait_for(lambda: len(cluster.followed()) >= len(expected), 30,
                         "log --follow to print every line")
        time.sleep(0.5)  # a line printed twice would show up now
        followed = cluster.followed()
        received = cluster.received()

    assert sorted(turns) == sorted(r.turn_id for r in requests)
    taken_over = []
    for index, request in enumerate(requests):
        events = turns[request.turn_id]
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        kinds = [e.event for e in events]
        assert isinstance(kinds[0], TurnStarted) and kinds[0].agent == request.agent
        assert [type(e) for e in kinds].count(TurnEnded) == 1
        assert isinstance(kinds[-1], TurnEnded) and kinds[-1].stop == "answered", kinds[-1]
        if any(isinstance(e, TurnTakenOver) for e in kinds):
            taken_over.append(request.turn_id)
        # requests the dead worker committed without a recorded answer: sent again (the same
        # body, if no image was lost), or never sent at all if it died before sending
        unanswered = sum(isinstance(e, TurnTakenOver) and isinstance(before, RequestSent)
                         for before, e in itertools.pairwise(kinds))
        sent = sum(isinstance(e, RequestSent) for e in kinds)
        marker = text_of(index).encode()
        bodies = [b for b in received if marker in b]
        assert len(bodies) - len(set(bodies)) <= unanswered, \
            f"{request.turn_id}: a request with a recorded answer was sent twice"
        assert sent - unanswered <= len(bodies) <= sent, (request.turn_id, sent, len(bodies))
        verification = anyio.run(verify, events)
        assert verification.identical, (request.turn_id, verification.divergence)
    assert taken_over, "the killed worker had turns in flight; another worker took them over"
    for turn_id in taken_over:
        done = processes.run([sys.executable, "-m", "fuseforks", "replay", pg_url, "--turn",
                               turn_id, "--verify"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    assert Counter(followed) == Counter(expected)
    assert any(line.split(" ", 1)[1].startswith("turn taken over: ") for line in followed)
    # the read model the workers wrote with their appends, a killed one among them, and the
    # turns it took over: exactly the folds' rows
    rows = assert_rows_are_the_folds(pg_url)
    assert len(rows.summaries) == N and len({r.turn_id for r in rows.request_images}) == N
