"""Liveness, measured: how long the bus stalls when the relay's leader is stopped, how long a turn
waits when its worker is killed or stopped, and what the leases cost — on a real PostgreSQL, a
real NATS with JetStream, worker processes, the simulator and the demo camera, all on this
machine's cores.

- relay: `STOPS` times, the current lease holder (read from the lease itself) is SIGSTOPped while
  a writer commits an event every 50 ms; the figure is the time from the SIGSTOP to the first
  event on the bus published under another lease. It is then continued, and every message it
  could have published after losing the lease is looked for (none is the goal). The bound
  stated: the lease runs out at most `LEASE` after the stop, and a follower leads within
  2 × `WATCH` of that.
- takeover: `KILLS` times, turns are put in flight on every worker (the provider answers after
  `LATENCY`, so each waits on it), one worker running some of them is SIGKILLed, and the figure
  is, per turn of the killed worker, the time from the SIGKILL to its `TurnTakenOver` (the event's
  time, taken by the worker that took it over; same machine, same clock). A fresh worker takes
  the killed one's place. Done with 2 and 3 workers and 1 and 3 turns in flight per worker, to
  show how it scales; the goal is p95 <= 3 s.
- stall: the same with SIGSTOP instead of SIGKILL (the worker's sessions stay open: only its
  leases running out free its turns), the stopped worker continued once they are taken over; the
  goal is p95 <= 5 s.
- renewals: one worker with 8 turns in flight, for `WINDOW` seconds: its lease renewals a second
  (each one statement for every lease it holds), their share of the store's statements and of
  the worker's CPU (the CPU of one renewal measured apart, on the same server).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

import anyio
import psycopg

from fuseforks.events.sequencer import Sequencer, SystemClock
from fuseforks.events.types import RoundStarted
from fuseforks.jetstream.lease import LEASE, RENEW, WATCH, Leases
from fuseforks.jetstream.streams import (
    EVENTS_STREAM,
    EVENTS_SUBJECT,
    LEASE_HEADER,
    connect,
)
from fuseforks.jetstream.work import WorkRequest
from fuseforks.stores.leases import LeaseTable
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.postgres_sql import EVENTS, LEASES
from tests.stores.server import fresh_database, server
from tests.workers.harness import Cluster
from tests.workers.nats_server import nats_server

STOPS = 10
KILLS = 20
WINDOW = 10.0
LATENCY = 2.0
SHAPES = ((2, 1), (3, 1), (3, 3))
"""(workers, turns in flight per worker) of the takeover runs."""
WIRE, MODEL = "anthropic", "claude-sonnet-5-5"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def spread(values: list[float]) -> str:
    return (f"median {statistics.median(values):.2f} s, p95 {percentile(values, 95):.2f} s, "
            f"max {max(values):.2f} s over {len(values)}")


# --- the relay -----------------------------------------------------------------------------------


class Published:
    """The events seen on the bus: when each arrived and the lease it was published under."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str]] = []
        self._arrived = anyio.Event()

    def add(self, token: str) -> None:
        self.seen.append((time.monotonic(), token))
        self._arrived.set()

    async def first_after(self, since: float, other_than: str) -> float:
        """When the first event published after `since` under another lease arrived."""
        while True:
            found = [at for at, token in self.seen if at > since and token != other_than]
            if found:
                return min(found)
            self._arrived = anyio.Event()
            await self._arrived.wait()


async def relay_stops(cluster: Cluster, url: str, nats_url: str) -> tuple[list[float], int]:
    """Stop the lease holder `STOPS` times: the lags, and the messages published by a holder
    after it lost the lease."""
    store = PostgresStore(url)
    key = f"relay-{store.identity()}"
    connection = await connect(nats_url)
    js = connection.jetstream()
    published = Published()
    subscription = await js.subscribe(f"{EVENTS_SUBJECT}.*", stream=EVENTS_STREAM,
                                      ordered_consumer=True)
    lags, late = [], 0
    async with anyio.create_task_group() as group:
        async def collect() -> None:
            async for message in subscription.messages:
                published.add((message.headers or {})[LEASE_HEADER])

        async def write() -> None:
            for n in range(1_000_000):
                turn = f"relay-{n}"
                batch = Sequencer(turn, SystemClock()).seal([RoundStarted(round=1)])
                await anyio.to_thread.run_sync(store.append, batch)
                await anyio.sleep(0.05)

        group.start_soon(collect)
        group.start_soon(write)
        for _ in range(STOPS):
            await published.first_after(0, "")
            old = published.seen[-1][1]
            holder = lease_holder(url, key)
            pid = cluster.workers[holder].pid
            steps = cluster.stderr(holder).count("stopped relaying")
            stopped = time.monotonic()
            os.kill(pid, signal.SIGSTOP)
            resumed = await published.first_after(stopped, old)
            lags.append(resumed - stopped)
            os.kill(pid, signal.SIGCONT)
            await anyio.to_thread.run_sync(
                cluster.wait_for, lambda h=holder, n=steps: cluster.stderr(h).count(
                    "stopped relaying") > n, 60, "the old leader to step down")
            await anyio.sleep(1)  # a message it published after waking would have arrived
            late += sum(at > resumed and token == old for at, token in published.seen)
        group.cancel_scope.cancel()
    await connection.close()
    store.close()
    return lags, late


def lease_holder(url: str, name: str) -> str:
    with psycopg.connect(url) as connection:
        row = connection.execute(f"SELECT holder FROM {LEASES} WHERE name = %s", [name]).fetchone()
    return str(row[0]) if row else ""


def relay() -> None:
    with fresh_database() as url, tempfile.TemporaryDirectory() as root:
        nats = nats_server()
        try:
            with Cluster(url, nats.url, Path(root)) as cluster:
                cluster.start_workers("w1", "w2", "w3")
                lags, late = anyio.run(relay_stops, cluster, url, nats.url)
        finally:
            nats.close()
    print(f"relay leader SIGSTOPped ({STOPS} times, 3 workers, an event committed every 50 ms): "
          f"the bus resumed under another lease after {spread(lags)} (bound: lease "
          f"{LEASE:g} s + {2 * WATCH:g} s); messages published by a stopped leader after it lost "
          f"the lease: {late}")


# --- takeover ------------------------------------------------------------------------------------


def started_by(url: str) -> dict[str, str]:
    """Each turn's worker, as its start records it (one query)."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(f"SELECT turn_id, body FROM {EVENTS} WHERE kind = 'TurnStarted'")
        return {turn: json.loads(body).get("worker", "") for turn, body in rows}


def taken_over(url: str, turns: list[str]) -> dict[str, float]:
    """When each of `turns` was taken over (its `TurnTakenOver`'s time), for those that were."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            f"SELECT turn_id, at FROM {EVENTS} WHERE kind = 'TurnTakenOver' AND turn_id = ANY(%s)",
            [turns]).fetchall()
    return {turn: datetime.fromisoformat(at).timestamp() for turn, at in rows}


def ended(url: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute(f"SELECT count(*) FROM {EVENTS} WHERE kind = 'TurnEnded'"
                                 ).fetchone()
    return int(row[0]) if row else 0


def kills(workers: int, in_flight: int, times: int, signum: int = signal.SIGKILL) -> list[float]:
    """SIGKILL (or SIGSTOP, continued once its turns are taken over, then replaced as well) a
    worker with turns in flight `times` times: the latencies to each turn's `TurnTakenOver`."""
    latencies: list[float] = []
    with fresh_database() as url, tempfile.TemporaryDirectory() as root:
        nats = nats_server()
        try:
            with Cluster(url, nats.url, Path(root), latency=LATENCY,
                         concurrency=in_flight + 1) as cluster:
                names = [f"w{i + 1}" for i in range(workers)]
                cluster.start_workers(*names)
                submitted = 0
                for kill in range(times):
                    tag = uuid.uuid4().hex[:6]
                    batch = [WorkRequest(turn_id=f"turn-{tag}-{i}", wire=WIRE, model=MODEL,
                                         agent="bench", request="Look at the camera.")
                             for i in range(workers * in_flight)]
                    cluster.submit(batch)
                    submitted += len(batch)
                    ids = [r.turn_id for r in batch]
                    cluster.wait_for(lambda ids=ids: all(t in started_by(url) for t in ids),
                                     120, "the turns to start")
                    by = started_by(url)
                    victim = by[ids[0]]
                    theirs = [t for t in ids if by[t] == victim]
                    killed_at = time.time()
                    cluster.kill(victim, signum)
                    if signum == signal.SIGKILL:
                        cluster.workers[victim].wait(timeout=30)
                    cluster.wait_for(lambda t=theirs: len(taken_over(url, t)) == len(t), 120,
                                     "the killed worker's turns to be taken over")
                    latencies += [at - killed_at for at in taken_over(url, theirs).values()]
                    if signum != signal.SIGKILL:  # continued: it finds its turns gone, then goes
                        cluster.kill(victim, signal.SIGCONT)
                        cluster.wait_for(lambda v=victim: "another worker took it over"
                                         in cluster.stderr(v), 60, "it to find them gone")
                        cluster.kill(victim, signal.SIGKILL)
                        cluster.workers[victim].wait(timeout=30)
                    replacement = f"w{workers + kill + 1}"
                    cluster.start_worker(replacement)
                    del cluster.workers[victim]
                    cluster.wait_for(lambda n=submitted: ended(url) == n, 300,
                                     "the turns to end")
        finally:
            nats.close()
    return latencies


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def store_counters(url: str) -> tuple[int, int]:
    """(transactions committed in the database — every statement of an autocommit session is
    one —, rows of the lease table updated), from the server's statistics."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("SELECT pg_stat_force_next_flush()")
        row = connection.execute(
            "SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),"
            f" (SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = '{LEASES}')").fetchone()
    assert row is not None
    return int(row[0]), int(row[1] or 0)


def renewal_cpu(url: str, held: int = 9, times: int = 400) -> tuple[float, float]:
    """(median wall seconds, CPU seconds per renewal) of `held` leases renewed together."""
    table = LeaseTable(url)
    leases = Leases(table, "bench")

    async def measure() -> tuple[float, float]:
        for n in range(held):
            assert await leases.take(f"turn:bench-{n}") is not None
        walls = []
        cpu = time.process_time()
        for _ in range(times):
            started = time.perf_counter()
            await leases.renew()
            walls.append(time.perf_counter() - started)
        return statistics.median(walls), (time.process_time() - cpu) / times

    try:
        return anyio.run(measure)
    finally:
        table.close()


def renewals() -> None:
    with fresh_database() as url, tempfile.TemporaryDirectory() as root:
        PostgresStore(url).close()
        wall, cpu = renewal_cpu(url)
        nats = nats_server()
        try:
            with Cluster(url, nats.url, Path(root), latency=0.5, rounds=6,
                         concurrency=8) as cluster:
                cluster.start_workers("w1")
                pid = cluster.workers["w1"].pid
                batch = [WorkRequest(turn_id=f"turn-renew-{i}", wire=WIRE, model=MODEL,
                                     agent="bench", request="Look at the camera.")
                         for i in range(64)]
                cluster.submit(batch)
                cluster.wait_for(lambda: cluster.counts()[0] >= 8, 120, "8 turns in flight")
                statements, updated = store_counters(url)
                spent = cpu_seconds(pid)
                time.sleep(WINDOW)
                statements = store_counters(url)[0] - statements - 2  # our own two reads
                updated = store_counters(url)[1] - updated
                spent = cpu_seconds(pid) - spent
                begun, done = cluster.counts()
        finally:
            nats.close()
    per_second = 1 / RENEW
    print(f"lease renewals, one worker with 8 turns in flight ({begun - done} running at the "
          f"end): {per_second:g} renewal statements a second (each renews every lease it holds: "
          f"{updated / WINDOW / per_second:.1f} leases a statement here); one renewal of 9 "
          f"leases takes {wall * 1e3:.2f} ms, {cpu * 1e3:.2f} ms of the worker's CPU; renewals "
          f"are {per_second * WINDOW / max(statements, 1):.1%} of the store's "
          f"{statements / WINDOW:.0f} statements a second and "
          f"{per_second * cpu / (spent / WINDOW):.1%} of the worker's CPU "
          f"({spent / WINDOW:.2f} s a second)")


def main() -> None:
    server()
    relay()
    renewals()
    stalls = kills(2, 1, KILLS, signal.SIGSTOP)
    print(f"worker SIGSTOPped with a turn in flight (2 workers, the provider answering after "
          f"{LATENCY:g} s; {KILLS} stops, continued after): SIGSTOP -> TurnTakenOver "
          f"{spread(stalls)} (goal p95 <= 5 s; bound: lease {LEASE:g} s + a look "
          f"{WATCH:g} s + the roster's)")
    every: list[float] = []
    for workers, in_flight in SHAPES:
        times = KILLS if in_flight == 1 else KILLS // 4
        latencies = kills(workers, in_flight, times)
        every += latencies
        print(f"worker SIGKILLed with turns in flight ({workers} workers, {in_flight} turns in "
              f"flight each, the provider answering after {LATENCY:g} s; {times} kills): "
              f"SIGKILL -> TurnTakenOver {spread(latencies)} (goal p95 <= 3 s)")
    print(f"all kills: SIGKILL -> TurnTakenOver {spread(every)}")
