"""Following the store in its global order: every event exactly once, each turn in seq order,
even when transactions commit in another order than they took their positions."""

from __future__ import annotations

import random
import threading
import time

import psycopg
import pytest

from fuseforks.events.codec import Envelope
from fuseforks.events.types import RoundStarted
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.postgres_database import IDLE_IN_WRITE
from fuseforks.stores.store import Position
from tests.stores.test_postgres_store import Gate, SlowStore, sealed

WRITERS, ROUNDS, EVENTS = 4, 12, 5


def positions(url: str) -> dict[tuple[str, int], int]:
    with psycopg.connect(url) as connection:
        return {(t, s): p for t, s, p in connection.execute(
            "SELECT turn_id, seq, position FROM events")}


def test_a_transaction_that_commits_late_is_held_back_not_passed_over(pg_url: str) -> None:
    slow, quick = SlowStore(pg_url), PostgresStore(pg_url)
    first = sealed("early", [RoundStarted(round=1)])
    slow.append(first)
    seen, at = quick.follow(None)
    assert (seen, at.position) == (first, 1)
    slow.gated = True
    late = sealed("early", [RoundStarted(round=2)], 1)
    with Gate(pg_url) as gate:
        writer = threading.Thread(target=slow.append, args=[late])
        writer.start()
        gate.waiting()  # "late" holds position 2, uncommitted
        after = sealed("later", [RoundStarted(round=1)])
        quick.append(after)  # position 3, committed first
        assert positions(pg_url) == {("early", 1): 1, ("later", 1): 3}
        assert quick.follow(at) == ([], at)  # "later" waits for the transaction before it
        gate.open()
        writer.join()
    events, end = quick.follow(at)
    assert events == late + after
    assert quick.follow(end) == ([], end)
    slow.close()
    quick.close()


def test_four_writers_with_late_commits_and_a_follower_see_every_event_once_in_order(
        pg_url: str) -> None:
    done = threading.Event()
    failures: list[BaseException] = []

    def write(index: int) -> None:
        store = SlowStore(pg_url)
        pace = random.Random(index)
        try:
            for round_ in range(ROUNDS):
                # Writer 0 holds its first round at the gate: positions taken after it commit
                # first; the others commit after random short waits.
                store.gated = (index, round_) == (0, 0)
                store.delay = pace.choice([0, 0, 0.02, 0.08])
                store.append(sealed(f"w{index}", [RoundStarted(round=round_)] * EVENTS,
                                    round_ * EVENTS))
        except BaseException as error:
            failures.append(error)
        finally:
            store.close()

    follower = PostgresStore(pg_url)
    gate = Gate(pg_url)
    writers = [threading.Thread(target=write, args=[i]) for i in range(WRITERS)]
    writers[0].start()
    gate.waiting()  # writer 0 holds the lowest position, uncommitted, from now on
    for thread in writers[1:]:
        thread.start()
    seen: list[Envelope] = []
    at: Position | None = None
    polls = 0

    def follow() -> None:
        nonlocal at, polls
        while True:
            finished = done.is_set()
            events, at = follower.follow(at, limit=7)
            polls += 1
            seen.extend(events)
            if not events:
                if finished:
                    return
                time.sleep(0.005)

    naive: set[tuple[str, int]] = set()
    naive_at = [0]

    def follow_by_position() -> None:
        """What a reader that trusts the sequence alone sees: it passes over late commits."""
        last = 0
        with psycopg.connect(pg_url, autocommit=True) as connection:
            while True:
                finished = done.is_set()
                rows = connection.execute(
                    "SELECT turn_id, seq, position FROM events WHERE position > %s "
                    "ORDER BY position LIMIT 7", [last]).fetchall()
                naive.update((turn_id, seq) for turn_id, seq, _ in rows)
                last = max([last, *(position for _, _, position in rows)])
                naive_at[0] = last
                if not rows:
                    if finished:
                        return
                    time.sleep(0.005)

    readers = [threading.Thread(target=follow), threading.Thread(target=follow_by_position)]
    for thread in readers:
        thread.start()
    for thread in writers[1:]:
        thread.join()
    with psycopg.connect(pg_url) as connection:
        (top,) = connection.execute("SELECT max(position) FROM events").fetchone() or (0,)
    deadline = time.monotonic() + 120  # a last resort against a hang, not a speed check
    while naive_at[0] < top:  # until the naive reader has read past writer 0's position
        assert time.monotonic() < deadline
        time.sleep(0.01)
    gate.open()
    writers[0].join()
    done.set()
    for thread in readers:
        thread.join()
    assert failures == []
    order = [(e.turn_id, e.seq) for e in seen]
    assert len(order) == len(set(order)) == WRITERS * ROUNDS * EVENTS
    for index in range(WRITERS):
        turn = f"w{index}"
        assert [e for e in seen if e.turn_id == turn] == follower.read(turn)
    passed_over = set(order) - naive
    assert passed_over, "no commit came late: the test did not exercise the gap"
    assert positions(pg_url).keys() == set(order)
    assert polls > WRITERS * ROUNDS * EVENTS // 7
    follower.close()


def test_the_relays_bytes_are_the_envelopes_json_built_without_decoding(pg_url: str) -> None:
    """`follow_encoded` wraps each stored body as it is; the bytes equal encoding the decoded
    envelope, event by event, with the same positions as `follow_placed`."""
    from fuseforks.events.codec import encode_envelope
    from tests.events.samples import SAMPLES
    from tests.stores.test_postgres_store import sealed as seal

    with PostgresStore(pg_url) as store:
        store.append(seal("t-enc", SAMPLES))
        placed = store.follow_placed(None, 1000)
        encoded = store.follow_encoded(None, 1000)
    assert len(encoded) == len(SAMPLES)
    assert encoded == [(position, e.turn_id, e.seq, encode_envelope(e)) for position, e in placed]


def test_a_writer_stopped_inside_its_transaction_is_cut_off_and_follow_goes_on(
        pg_url: str) -> None:
    """A writing session (connected as the store connects its own) that took a transaction id
    and then stopped — between its insert and its commit — holds every follower back. The server
    ends it after `IDLE_IN_WRITE` seconds; then the follower reads what was committed after it."""
    store = PostgresStore(pg_url)
    store.append(sealed("before", [RoundStarted(round=1)]))
    _, at = store.follow(None)
    stopped = psycopg.connect(pg_url, **store.database.writing())
    stopped.execute("BEGIN")
    stopped.execute("SELECT pg_current_xact_id()")  # holds an id, as an insert would
    held_at = time.monotonic()
    after = sealed("after", [RoundStarted(round=1)])
    store.append(after)
    assert store.follow(at) == ([], at)  # held back by the stopped writer
    deadline = held_at + 120  # a last resort against a hang, not a speed check
    while not (events := store.follow(at)[0]):
        assert time.monotonic() < deadline, "follow never went past the stopped writer"
        time.sleep(0.05)
    waited = time.monotonic() - held_at
    assert events == after
    with pytest.raises(psycopg.Error):
        stopped.execute("SELECT 1")
    assert stopped.closed or stopped.broken  # the server ended it: that is why follow went on
    assert waited >= IDLE_IN_WRITE
    stopped.close()
    store.close()
