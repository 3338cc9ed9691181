"""`fuseforks log --follow --durable NAME`: a follower that is killed and started again with the
same name goes on where it stopped — every line of every turn printed, none lost, and none twice
except the one it may have been printing when it was killed."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

from fuseforks.jetstream.work import WorkRequest
from fuseforks.projections.log import turn_log
from tests.workers.harness import MODELS, WIRES, Cluster
from tests.workers.nats_server import Given, NatsServer


def batch(tag: str, n: int) -> list[WorkRequest]:
    return [WorkRequest(turn_id=f"turn-{tag}-{i}", wire=WIRES[i % len(WIRES)],
                        model=MODELS[WIRES[i % len(WIRES)]], agent=f"{tag}{i}",
                        request="Look at the camera.") for i in range(n)]


def test_a_durable_follower_resumes_where_it_was_killed(pg_url: str, nats: NatsServer | Given,
                                                        tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:4]
    with Cluster(pg_url, nats.url, tmp_path, latency=0.1, concurrency=2) as cluster:
        cluster.start_worker("w1")
        cluster.start_follower("--durable", "audit-feed", name="first")
        cluster.submit(batch(f"a{tag}", 4))
        cluster.wait_for(lambda: len(cluster.followed("first")) >= 4, 60, "the first lines")
        assert cluster.follower is not None
        cluster.follower.send_signal(signal.SIGKILL)
        cluster.follower.wait(timeout=10)
        cluster.submit(batch(f"b{tag}", 4))
        cluster.wait_for(lambda: cluster.counts() == (8, 8), 120, "every turn to end")
        expected = [line for t in cluster.turns().values() for line in turn_log(t)]
        cluster.start_follower("--durable", "audit-feed", name="second")
        both = lambda: cluster.followed("first") + cluster.followed("second")  # noqa: E731
        cluster.wait_for(lambda: set(both()) >= set(expected), 60, "the rest of the lines")
        printed = both()
    assert len(set(expected)) == len(expected), "each line names its own agent"
    assert set(printed) == set(expected)
    assert len(printed) - len(expected) <= 1
