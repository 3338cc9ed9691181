"""Workers: turns per second with one worker and with two, and what the queue and the bus add to
one turn, on a real PostgreSQL, a real NATS with JetStream, the simulator and the demo camera.

The provider answers after a fixed latency (`LATENCY`, like a real model's), and every turn is
the same: one camera call and two model calls. So a worker's rate is bounded by its concurrency
and the latency, not by the machine, and two workers at the same per-worker concurrency should
give close to twice the rate; what they do not gain is the cost of the machinery (the shared
store, the relay, the two processes on 2 cores).

- scale: `TURNS` turns submitted at once, timed from the submit to the last turn's end in the
  store, with one worker, then with two (same concurrency each), each in a fresh database.
- overhead: one turn at a time, `SINGLE` times: submit → first event seen on the bus, and submit
  → answer seen on the bus, against `Agent.run` of the same turn in one process (same simulator,
  same camera, same store). The ratio of medians is the figure.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import psycopg

from fuseforks.agent import Agent, AgentSettings
from fuseforks.events.types import TurnEnded
from fuseforks.jetstream.streams import EVENTS_STREAM, connect, decode, ensure_streams, turn_subject
from fuseforks.jetstream.work import WorkRequest, submit
from fuseforks.simulator.server import WIRE_PREFIXES
from fuseforks.stores.postgres_sql import EVENTS
from tests.stores.server import fresh_database, server
from tests.workers.harness import KEYS, Cluster
from tests.workers.nats_server import nats_server

LATENCY = 0.2
TURNS = 128
CONCURRENCIES = (4, 8)
"""Per worker. At 4 the two cores are not the limit, and the figure is the machinery's; at 8 two
workers use both cores (HTTP to the provider is the largest part of a worker's own CPU time), and
the figure shows the machine's limit as well."""
SINGLE = 15
WIRE, MODEL = "anthropic", "claude-sonnet-5-5"


def requests(n: int, tag: str) -> list[WorkRequest]:
    return [WorkRequest(turn_id=f"turn-{tag}-{i:03d}", wire=WIRE, model=MODEL, agent="bench",
                        request=f"Look at the camera ({tag} {i}).") for i in range(n)]


def ended(url: str) -> int:
    """Turns ended in the store: one count query (the poll must not load the machine)."""
    with psycopg.connect(url) as connection:
        row = connection.execute(f"SELECT count(*) FROM {EVENTS} WHERE kind = 'TurnEnded'").fetchone()
    return int(row[0]) if row else 0


@contextmanager
def servers() -> Iterator[tuple[str, str]]:
    """A fresh database and a NATS server (the fuseforks streams of a given one cleared)."""
    with fresh_database() as url:
        nats = nats_server()
        clear = getattr(nats, "clear", None)
        if clear:
            clear()
        try:
            yield url, nats.url
        finally:
            nats.close()


def scale(workers: int, concurrency: int) -> float:
    """Turns per second with `workers` workers, each running `concurrency` turns at once."""
    with servers() as (url, nats_url), tempfile.TemporaryDirectory() as root, \
            Cluster(url, nats_url, Path(root), latency=LATENCY,
                    concurrency=concurrency) as cluster:
        for w in range(workers):
            cluster.start_worker(f"w{w + 1}")
        batch = requests(TURNS, uuid.uuid4().hex[:6])
        started = time.perf_counter()
        cluster.submit(batch)
        cluster.wait_for(lambda: ended(url) == TURNS, 600, "the turns to end")
        return TURNS / (time.perf_counter() - started)


async def through_the_queue(nats_url: str, request: WorkRequest) -> tuple[float, float]:
    connection = await connect(nats_url)
    try:
        js = connection.jetstream()
        await ensure_streams(js)
        subscription = await js.subscribe(turn_subject(request.turn_id), stream=EVENTS_STREAM,
                                          ordered_consumer=True)
        started = time.perf_counter()
        await submit(js, request)
        first = 0.0
        while True:
            envelope = decode((await subscription.next_msg(timeout=60)).data)
            if not first:
                first = time.perf_counter() - started
            if isinstance(envelope.event, TurnEnded):
                return first, time.perf_counter() - started
    finally:
        await connection.close()


async def in_process(url: str, base_url: str, mcp: Path, texts: list[str]) -> list[float]:
    """The same turns run by one warm `Agent` in this process."""
    took = []
    async with Agent(wire=WIRE, model=MODEL, base_url=base_url, api_key=KEYS["ANTHROPIC_API_KEY"],
                     mcp=mcp, db=url, log=None, settings=AgentSettings(name="bench")) as agent:
        for text in texts:
            started = time.perf_counter()
            await agent.run(text)
            took.append(time.perf_counter() - started)
    return took


def overhead() -> tuple[float, float, float]:
    with servers() as (url, nats_url), tempfile.TemporaryDirectory() as root, \
            Cluster(url, nats_url, Path(root), latency=LATENCY, concurrency=1) as cluster:
        cluster.start_worker("w1")
        base_url = cluster.base_url + WIRE_PREFIXES[WIRE]
        queued, first = [], []
        for request in requests(SINGLE + 1, uuid.uuid4().hex[:6]):
            seen_first, answered = anyio.run(through_the_queue, nats_url, request)
            first.append(seen_first)
            queued.append(answered)
        local = anyio.run(in_process, url, base_url, Path(root) / "mcp.json",
                          [f"Look at the camera (local {i})." for i in range(SINGLE + 1)])
        # the first of each warms its path up
        return (statistics.median(first[1:]), statistics.median(queued[1:]),
                statistics.median(local[1:]))


def main() -> None:
    server()
    print(f"provider latency {LATENCY * 1000:.0f} ms per response, {TURNS} turns of two model "
          "calls and one camera call, 2 cores shared by PostgreSQL, NATS, the simulator, the "
          "workers and their cameras")
    for concurrency in CONCURRENCIES:
        one = scale(1, concurrency)
        two = scale(2, concurrency)
        print(f"scale at concurrency {concurrency} per worker: 1 worker {one:.1f} turns/s, "
              f"2 workers {two:.1f} turns/s, ratio {two / one:.2f}x (goal >= 1.8x)")
    first, queued, local = overhead()
    print(f"one turn (median of {SINGLE}): submit -> first event {first * 1000:.0f} ms, "
          f"submit -> answer {queued * 1000:.0f} ms, in-process Agent.run {local * 1000:.0f} ms; "
          f"queue and bus add {(queued - local) * 1000:.0f} ms ({queued / local:.2f}x)")
    sys.stdout.flush()
