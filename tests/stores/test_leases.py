"""Leases on a real PostgreSQL server: taken when free, renewed together in one statement, free
when released, run out, or their holder's session ended; each taking a new epoch, and a fenced
append stored only under the epoch its turn's lease is at."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from fuseforks.core.errors import LeaseLost
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import RoundStarted
from fuseforks.stores.leases import Held, LeaseTable
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.postgres_sql import POSTGRES_STORE_VERSION
from fuseforks.stores.store import Fence


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)  # its tables, the leases' among them
    yield opened
    opened.close()


def test_a_lease_is_one_holders_until_released_and_each_taking_is_a_new_epoch(
        store: PostgresStore, pg_url: str) -> None:
    a, b = LeaseTable(pg_url), LeaseTable(pg_url)
    try:
        first = a.take("turn:t1", "a", 30)
        assert first is not None and first.epoch >= 1
        assert b.take("turn:t1", "b", 30) is None
        assert b.free(["turn:t1", "turn:never"]) == ["turn:never"]
        a.release("a", [Held(name="turn:t1", epoch=first.epoch, value="kept")])
        second = b.take("turn:t1", "b", 30)
        assert second is not None
        assert (second.epoch, second.value) == (first.epoch + 1, "kept")
        # the old holder's renewal and release, at its old epoch, do nothing
        assert a.renew("a", [Held(name="turn:t1", epoch=first.epoch)], 30) == set()
        a.release("a", [Held(name="turn:t1", epoch=first.epoch)])
        assert b.free(["turn:t1"]) == []
    finally:
        a.close()
        b.close()


def test_a_lease_not_renewed_runs_out_and_another_takes_it(store: PostgresStore,
                                                            pg_url: str) -> None:
    a, b = LeaseTable(pg_url), LeaseTable(pg_url)
    try:
        taken = a.take("relay-x", "a", 0.5)
        assert taken is not None and b.take("relay-x", "b", 30) is None
        time.sleep(0.7)
        assert b.free(["relay-x"]) == ["relay-x"]
        again = b.take("relay-x", "b", 30)
        assert again is not None and again.epoch == taken.epoch + 1
    finally:
        a.close()
        b.close()


def test_a_lease_run_out_that_nobody_took_is_still_its_holders(store: PostgresStore,
                                                               pg_url: str) -> None:
    """Nobody acted in its place: the holder that was late renews it and goes on."""
    a = LeaseTable(pg_url)
    try:
        taken = a.take("turn:late", "a", 0.3)
        assert taken is not None
        time.sleep(0.5)
        assert a.renew("a", [Held(name="turn:late", epoch=taken.epoch)], 30) == {"turn:late"}
        assert a.free(["turn:late"]) == []
    finally:
        a.close()


def test_a_lease_is_free_at_once_when_its_holders_session_ends(store: PostgresStore,
                                                               pg_url: str) -> None:
    a, b = LeaseTable(pg_url), LeaseTable(pg_url)
    try:
        taken = a.take("turn:t2", "a", 3600)
        assert taken is not None
        a.close()  # as a process that died: its session is gone
        deadline = time.monotonic() + 10
        while b.free(["turn:t2"]) != ["turn:t2"]:
            assert time.monotonic() < deadline, "the ended session's lease stayed held"
            time.sleep(0.05)
        assert b.take("turn:t2", "b", 30) is not None
    finally:
        b.close()


def test_every_lease_of_a_holder_is_renewed_in_one_statement(store: PostgresStore,
                                                             pg_url: str) -> None:
    a = LeaseTable(pg_url)
    try:
        held = []
        for n in range(9):
            taken = a.take(f"turn:many-{n}", "a", 30)
            assert taken is not None
            held.append(Held(name=f"turn:many-{n}", epoch=taken.epoch))
        sent: list[str] = []
        with a._session("look") as connection:  # the one session the table talks on
            execute = connection.execute
            connection.execute = lambda query, *args, **kw: (  # type: ignore[method-assign]
                sent.append(str(query)), execute(query, *args, **kw))[1]
        kept = a.renew("a", held, 30)
        assert kept == {h.name for h in held}
        assert len(sent) == 1 and sent[0].startswith("UPDATE fuseforks_leases")
    finally:
        a.close()


def test_a_fenced_append_is_stored_only_under_its_leases_epoch(store: PostgresStore,
                                                               pg_url: str) -> None:
    a, b = LeaseTable(pg_url), LeaseTable(pg_url)
    try:
        old = a.take("turn:fenced", "a", 0.3)
        assert old is not None
        fences = {"fenced": Fence(name="turn:fenced", holder="a", epoch=old.epoch)}
        store.fence_of = fences.get
        sequencer = Sequencer("fenced", FixedClock())
        store.append(sequencer.seal([RoundStarted(round=1)]))  # under its epoch: stored
        time.sleep(0.5)
        new = b.take("turn:fenced", "b", 30)  # it ran out; another holder takes it
        assert new is not None and new.epoch == old.epoch + 1
        late = sequencer.seal([RoundStarted(round=2)])  # continues the stored tail exactly
        with pytest.raises(LeaseLost) as refused:
            store.append(late)
        assert str(refused.value) == (
            f"{store.name}: turn fenced seq 2-2 was not stored: its lease turn:fenced is at "
            f"epoch {new.epoch}, held by b; a wrote under epoch {old.epoch}")
        assert [e.seq for e in store.read("fenced")] == [1]
        fences["fenced"] = Fence(name="turn:fenced", holder="b", epoch=new.epoch)
        store.append(late)  # the new holder's own append of that seq
        assert [e.seq for e in store.read("fenced")] == [1, 2]
    finally:
        store.fence_of = None
        a.close()
        b.close()


def test_a_late_append_under_a_lost_lease_says_so_after_the_new_holder_wrote_on(
        store: PostgresStore, pg_url: str) -> None:
    """The new holder has already stored the seqs the old one comes back with: what the old one
    hears is still that its lease moved on, not a race for the seqs (which it could retry)."""
    a, b = LeaseTable(pg_url), LeaseTable(pg_url)
    try:
        old = a.take("turn:overtaken", "a", 0.3)
        assert old is not None
        fences = {"overtaken": Fence(name="turn:overtaken", holder="a", epoch=old.epoch)}
        store.fence_of = fences.get
        sequencer = Sequencer("overtaken", FixedClock())
        store.append(sequencer.seal([RoundStarted(round=1)]))
        late = sequencer.seal([RoundStarted(round=2)])
        time.sleep(0.5)
        new = b.take("turn:overtaken", "b", 30)
        assert new is not None
        fences["overtaken"] = Fence(name="turn:overtaken", holder="b", epoch=new.epoch)
        store.append(late)  # the new holder writes seq 2 first
        fences["overtaken"] = Fence(name="turn:overtaken", holder="a", epoch=old.epoch)
        with pytest.raises(LeaseLost) as refused:
            store.append(late)
        assert str(refused.value) == (
            f"{store.name}: turn overtaken seq 2-2 was not stored: its lease turn:overtaken is "
            f"at epoch {new.epoch}, held by b; a wrote under epoch {old.epoch}")
        assert [e.seq for e in store.read("overtaken")] == [1, 2]
    finally:
        store.fence_of = None
        a.close()
        b.close()


def test_an_append_without_a_fence_is_not_checked(store: PostgresStore) -> None:
    store.fence_of = lambda turn_id: None
    try:
        store.append(Sequencer("unfenced", FixedClock()).seal([RoundStarted(round=1)]))
        assert [e.seq for e in store.read("unfenced")] == [1]
    finally:
        store.fence_of = None


def test_a_store_of_the_layout_before_leases_gets_them_when_opened(pg_url: str) -> None:
    with PostgresStore(pg_url) as store:
        store.append(Sequencer("before", FixedClock()).seal([RoundStarted(round=1)]))
    with psycopg.connect(pg_url, autocommit=True) as connection:  # as layout 2 left it
        connection.execute("DROP TABLE fuseforks_leases")
        connection.execute("UPDATE fuseforks_meta SET value = '2' WHERE key = 'store_version'")
    assert PostgresStore.inspect(pg_url) == 2
    table = LeaseTable(pg_url)
    try:
        with PostgresStore(pg_url) as store:
            assert PostgresStore.inspect(pg_url) == POSTGRES_STORE_VERSION == 3
            taken = table.take("turn:before", "a", 30)
            assert taken is not None
            store.fence_of = {"before": Fence(name="turn:before", holder="a",
                                              epoch=taken.epoch)}.get
            store.append(Sequencer("before", FixedClock(), 1).seal([RoundStarted(round=2)]))
            assert [e.seq for e in store.read("before")] == [1, 2]
    finally:
        table.close()
