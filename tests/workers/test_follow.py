"""`fuseforks log --follow --durable NAME`: a follower that is killed and started again with the
same name goes on where it stopped — every line of every turn printed, none lost, and none twice
except the one it may have been printing when it was killed."""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import anyio

from fuseforks.jetstream.streams import EVENTS_STREAM, connect
from fuseforks.jetstream.work import WorkRequest
from fuseforks.projections.log import short_turn_id, turn_log
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
        expected = [f"{short_turn_id(turn_id)} {line}" for turn_id, t in cluster.turns().items()
                    for line in turn_log(t)]
        cluster.start_follower("--durable", "audit-feed", name="second")
        both = lambda: cluster.followed("first") + cluster.followed("second")  # noqa: E731
        cluster.wait_for(lambda: set(both()) >= set(expected), 60, "the rest of the lines")
        printed = both()
    assert len(set(expected)) == len(expected), "each line names its own agent"
    assert set(printed) == set(expected)
    assert len(printed) - len(expected) <= 1


def test_the_relay_resumes_from_its_saved_position_when_the_stream_has_forgotten(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    """The events stream forgets its messages after a week; the relay's position is kept in a
    key-value bucket, so a relay that starts on an emptied stream neither stalls nor publishes
    the old turns again."""
    tag = uuid.uuid4().hex[:4]

    async def purge() -> None:
        connection = await connect(nats.url)
        await connection.jetstream().purge_stream(EVENTS_STREAM)
        await connection.close()

    with Cluster(pg_url, nats.url, tmp_path, concurrency=2) as cluster:
        cluster.start_worker("w1")
        cluster.submit(batch(f"old{tag}", 2))
        cluster.wait_for(lambda: cluster.counts() == (2, 2), 60, "the old turns")
        cluster.kill("w1", signal.SIGTERM)
        assert cluster.workers["w1"].wait(timeout=30) == 0
        anyio.run(purge)  # as if a week had passed
        cluster.start_follower("--from-start")
        cluster.start_worker("w2")
        cluster.submit(batch(f"new{tag}", 1))
        cluster.wait_for(lambda: cluster.counts() == (3, 3), 60, "the new turn")
        new = [f"{short_turn_id(turn_id)} {line}" for turn_id, t in cluster.turns().items()
               if f"new{tag}" in turn_id for line in turn_log(t)]
        cluster.wait_for(lambda: len(cluster.followed()) >= len(new), 30, "the new lines")
        time.sleep(1)  # an old line published again would show up now
        followed = cluster.followed()
    assert followed == new
