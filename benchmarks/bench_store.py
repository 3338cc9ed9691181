"""Event store: append and read+decode+fold, side by side with `eventsourcing`'s SQLite persistence.

Workload: 200 turns x 100 events, appended in rounds of 10, then every turn read back and
folded. Both stores write a real SQLite file in WAL mode in the same temporary folder, on the same
events (ours as typed msgspec events, eventsourcing's as aggregate events carrying the same data).

The floor of an append is plain `sqlite3` on a file set up as ours (WAL, `synchronous=NORMAL`)
writing what ours writes, everything computed beforehand: each round's event rows, and — in a
second run — the read model's rows the round changes, in the same transaction. The two floors
side by side say what the read model costs SQLite itself, whatever Python does around it.
"""

from __future__ import annotations

import math
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import msgspec

from fuseforks.events.codec import encode_event
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import TurnEvent
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.projections.read_model import TurnRows, changed_rows, fold_rows
from fuseforks.stores import read_tables
from fuseforks.stores.sqlite import SQLITE, SqliteStore
from tests.events.samples import SAMPLES

TURNS, EVENTS_PER_TURN, ROUND = 200, 100, 10
REPEATS = 5
"""Reads are repeated and the best run kept: the machine is shared, and the minimum is the cost."""


def turn_events() -> list[TurnEvent]:
    """A camera turn as the engine records it: 16 rounds of ask, call, normalize, record, then the
    answer — with every other event kind (retries, drops, cap, 400 fallback, repeat) mixed in once."""
    by_kind = {type(e).__name__: e for e in SAMPLES}
    camera_round = [by_kind[k] for k in (
        "RoundStarted", "RequestSent", "ResponseReceived", "ToolCalled", "ImagesNormalized",
        "ToolResultRecorded",
    )]
    rare = [by_kind[k] for k in (
        "LlmRetried", "LlmRetryStopped", "JpegResent", "ImagesDropped", "ImagesCapped",
        "RequestRefused", "ImagesStripped", "FallbackSettled", "RepeatDetected",
    )]
    events = [by_kind["TurnStarted"], *rare]
    while len(events) < EVENTS_PER_TURN - 1:
        events.extend(camera_round[: EVENTS_PER_TURN - 1 - len(events)])
    return [*events, by_kind["TurnEnded"]]


def bench_ours(folder: Path, events: list[TurnEvent]) -> tuple[float, float, int]:
    store = SqliteStore(folder / "fuseforks.db")
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


Statement = tuple[str, list[tuple[object, ...]]]


def floor_rounds(events: list[TurnEvent], rows: bool) -> list[list[Statement]]:
    """Each round's statements as ours would run them, parameters ready: its events, and (`rows`)
    the read-model rows it changes."""
    insert = ("INSERT INTO events(turn_id, seq, kind, version, at, body) "
              "VALUES (?, ?, ?, ?, ?, ?)")
    rounds = []
    for t in range(TURNS):
        sequencer, state = Sequencer(f"turn-{t}", FixedClock()), TurnRows()
        for r in range(0, EVENTS_PER_TURN, ROUND):
            sealed = sequencer.seal(events[r : r + ROUND])
            statements: list[Statement] = [(insert, [
                (e.turn_id, e.seq, e.kind, e.version, e.at, (body or encode_event(e.event)).decode())
                for e, body in zip(sealed, sealed.bodies, strict=True)])]
            before, state = state, fold_rows(sealed, state)
            if rows:
                changes = changed_rows(before, state)
                statements += [(read_tables.upsert(table, SQLITE), values)
                               for table in read_tables.TABLES
                               if (values := read_tables.values(table, changes))]
            rounds.append(statements)
    return rounds


def bench_floor(folder: Path, events: list[TurnEvent], rows: bool) -> float:
    rounds = floor_rounds(events, rows)
    name = folder / f"floor-{rows}.db"
    SqliteStore(name).close()  # the same tables, keys and options as ours
    connection = sqlite3.connect(name, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    started = time.perf_counter()
    for statements in rounds:
        connection.execute("BEGIN IMMEDIATE")
        for sql, values in statements:
            connection.executemany(sql, values)
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed


def bench_eventsourcing(folder: Path, events: list[TurnEvent]) -> tuple[float, float]:
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class Turn(Aggregate):
        @event("Started")
        def __init__(self) -> None:
            self.events: list[dict] = []

        @event("Recorded")
        def record(self, body: dict) -> None:
            self.events.append(body)

    bodies = [msgspec.to_builtins(e) for e in events]
    app = Application(env={
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(folder / "eventsourcing.db"),
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


def main() -> None:
    events = turn_events()
    total = TURNS * EVENTS_PER_TURN
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ours_append, ours_read, lines = bench_ours(folder, events)
        es_append, es_read = bench_eventsourcing(folder, events)
        floor_events = bench_floor(folder, events, rows=False)
        floor_rows = bench_floor(folder, events, rows=True)
        size = os.path.getsize(folder / "fuseforks.db")
    print(f"workload: {TURNS} turns x {EVENTS_PER_TURN} events, appended in rounds of {ROUND}")
    print(f"fuseforks append:      {total / ours_append:>10,.0f} events/s ({ours_append:.2f} s)")
    print(f"eventsourcing append:  {total / es_append:>10,.0f} events/s ({es_append:.2f} s)")
    print(f"floor append, events only (sqlite3, prepared beforehand): {floor_events:.2f} s; "
          f"with the read model's rows: {floor_rows:.2f} s "
          f"({floor_rows / floor_events:.2f}x: what the rows cost SQLite)")
    print(f"fuseforks append / floor with rows: {ours_append / floor_rows:.2f}x")
    print(f"fuseforks read+decode+fold: {total / ours_read:>10,.0f} events/s ({lines} log lines)")
    print(f"eventsourcing repository.get: {total / es_read:>10,.0f} events/s")
    print(f"ratio append (fuseforks / eventsourcing): {es_append / ours_append:.2f}x  (goal >= 1.5x)")
    print(f"ratio read   (fuseforks / eventsourcing): {es_read / ours_read:.2f}x  (goal >= 10x)")
    print(f"read+decode+fold goal >= 300,000 events/s: "
          f"{'met' if total / ours_read >= 300_000 else 'NOT met'}; store file {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
