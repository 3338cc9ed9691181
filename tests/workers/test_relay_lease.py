"""The relay's lease: a leader that is stopped (SIGSTOP: its connections stay open, so a lock held
by one would never be given up) is replaced by a follower once its lease runs out, and when it
is continued it publishes nothing more and steps down."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import anyio

from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import RoundStarted
from fuseforks.jetstream.lease import LEASE
from fuseforks.jetstream.streams import EVENTS_STREAM, LEASE_HEADER, MSG_ID, connect
from fuseforks.stores.postgres import PostgresStore
from tests.workers.harness import RELAYING, Cluster
from tests.workers.nats_server import Given, NatsServer


def published(nats_url: str) -> list[tuple[str, str]]:
    """Every message of the events stream: (message id, the lease it was published under)."""

    async def read() -> list[tuple[str, str]]:
        connection = await connect(nats_url)
        try:
            js = connection.jetstream()
            info = await js.stream_info(EVENTS_STREAM)
            found: list[tuple[str, str]] = []
            if not info.state.messages:
                return found
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                headers = (await js.get_msg(EVENTS_STREAM, seq=seq)).headers or {}
                found.append((headers[MSG_ID], headers[LEASE_HEADER]))
            return found
        finally:
            await connection.close()

    return anyio.run(read)


def test_a_stopped_relay_leader_is_replaced_and_publishes_nothing_once_continued(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    with Cluster(pg_url, nats.url, tmp_path) as cluster, PostgresStore(pg_url) as store:
        cluster.start_workers("w1", "w2")
        (old_leader,) = cluster.relaying()
        (follower,) = {"w1", "w2"} - {old_leader}

        def write(turn_id: str) -> float:
            store.append(Sequencer(turn_id, FixedClock()).seal([RoundStarted(round=1)]))
            return time.monotonic()

        def on_bus(turn_id: str) -> bool:
            return any(msg_id == f"{turn_id}:1" for msg_id, _ in published(nats.url))

        write("lease-a")
        cluster.wait_for(lambda: on_bus("lease-a"), 60, "the leader to publish")
        leader = cluster.workers[old_leader]
        leader.send_signal(signal.SIGSTOP)
        try:
            written = write("lease-b")
            cluster.wait_for(lambda: on_bus("lease-b"), 120, "a follower to publish")
            lag = time.monotonic() - written
            assert leader.poll() is None  # still stopped: the follower did not wait for it
            assert cluster.relaying() == sorted([old_leader, follower])
        finally:
            leader.send_signal(signal.SIGCONT)
        cluster.wait_for(lambda: "stopped relaying" in cluster.stderr(old_leader), 60,
                         "the old leader to step down")
        write("lease-c")
        cluster.wait_for(lambda: on_bus("lease-c"), 60, "the new leader to go on")
        messages = published(nats.url)
        stepped_down = cluster.stderr(old_leader)
    (first, second, third) = messages
    assert [msg_id for msg_id, _ in messages] == ["lease-a:1", "lease-b:1", "lease-c:1"]
    old, new = first[1], second[1]
    assert old != new and third[1] == new
    assert re.search(r"stopped relaying: (the lease ran out|another relay took the lease) "
                     rf"\(1 events published under lease {old}\)", stepped_down), stepped_down
    assert stepped_down.count(RELAYING) == 1  # it did not take the lease back
    assert lag < LEASE + 60, lag  # exact figures: benchmarks/bench_takeover.py
