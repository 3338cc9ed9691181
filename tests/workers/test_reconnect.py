"""A worker that loses NATS, then PostgreSQL, for a few seconds each (real server restarts) while
turns run: every turn still ends exactly once, with no seq missing or doubled, verifies, and the
live log printed every line exactly once."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from pathlib import Path

import anyio

from fuseforks.engine.replay import verify
from fuseforks.events.types import TurnEnded
from fuseforks.jetstream.work import WorkRequest
from fuseforks.projections.log import short_turn_id, turn_log
from tests.stores.server import Server
from tests.workers.harness import MODELS, WIRES, Cluster
from tests.workers.nats_server import NatsServer

N = 16


def test_a_worker_rides_out_a_nats_restart_and_a_postgres_restart(
        pg_server: Server, pg_url: str, own_nats: NatsServer, tmp_path: Path) -> None:
    run = uuid.uuid4().hex[:8]
    requests = [WorkRequest(turn_id=f"turn-{run}-{i:02d}", wire=WIRES[i % len(WIRES)],
                            model=MODELS[WIRES[i % len(WIRES)]], agent=f"r{i:02d}",
                            request=f"Look at the camera [{i}].") for i in range(N)]
    with Cluster(pg_url, own_nats.url, tmp_path, latency=0.3, exposure=0.1, rounds=2,
                 concurrency=2) as cluster:
        cluster.start_follower()
        cluster.start_worker("w1")
        cluster.submit(requests)

        def ended() -> int:
            return cluster.counts()[1]

        cluster.wait_for(lambda: ended() >= 2, 60, "the first turns")
        own_nats.restart(down_for=3)
        cluster.wait_for(lambda: ended() >= 7, 120, "turns after the NATS restart")
        pg_server.restart(down_for=3)
        cluster.wait_for(lambda: ended() == N, 180, "every turn after the PostgreSQL restart")
        turns = cluster.turns()
        expected = [f"{short_turn_id(turn_id)} {line}" for turn_id, t in turns.items()
                    for line in turn_log(t)]
        cluster.wait_for(lambda: len(cluster.followed()) >= len(expected), 60,
                         "log --follow to print every line")
        time.sleep(1)
        followed = cluster.followed()
        assert cluster.workers["w1"].poll() is None, cluster.stderr("w1")

    assert len(turns) == N
    for events in turns.values():
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert [type(e.event) for e in events].count(TurnEnded) == 1
        assert isinstance(events[-1].event, TurnEnded)
        assert events[-1].event.stop == "answered", events[-1].event
        verification = anyio.run(verify, events)
        assert verification.identical, verification.divergence
    assert Counter(followed) == Counter(expected)
