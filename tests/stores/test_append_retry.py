"""An append whose connection is lost: the store reads back whether the round is stored, and
tries it again on new connections (when it is not) for as long as the store's patience lasts.
Never a round twice, never a round lost without saying so."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

import psycopg
import pytest

from fuseforks.core.errors import StoreError
from fuseforks.events.types import RoundStarted
from fuseforks.stores.postgres import PostgresStore
from tests.stores.server import PASSWORD
from tests.stores.test_postgres_store import (
    Gate,
    SlowStore,
    name_of,
    sealed,
    terminate_at_gate,
    wait_for_backends,
    wait_gone,
)


def terminate_until(gate: Gate, stop: threading.Event) -> threading.Thread:
    """Terminate the backend of every append that waits at the gate, until `stop` is set."""

    def terminate() -> None:
        with psycopg.connect(gate.url, autocommit=True) as connection:
            while not stop.is_set():
                rows = connection.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event_type = "
                    "'Lock' AND query LIKE 'SELECT pg_advisory_xact_lock_shared%%'",
                    [gate.database]).fetchall()
                for (pid,) in rows:
                    connection.execute("SELECT pg_terminate_backend(%s)", [pid])
                    wait_gone(gate.url, pid)
                time.sleep(0.01)

    return threading.Thread(target=terminate)


def test_a_round_lost_before_its_commit_is_tried_again_until_it_is_stored(pg_url: str) -> None:
    """A server restart breaks every connection at once, and the server may stay away for a
    while: the round, of which nothing was stored, goes again on new connections and is stored
    once."""
    store = SlowStore(pg_url)
    store.append(sealed("t1", [RoundStarted(round=1)]))
    store.gated = True
    with Gate(pg_url) as gate:
        killer = terminate_at_gate(gate, 3, then_open=True)
        killer.start()
        store.append(sealed("t1", [RoundStarted(round=2), RoundStarted(round=3)], 1))
        killer.join()
    assert [(e.seq, e.event) for e in store.read("t1")] == [
        (1, RoundStarted(round=1)), (2, RoundStarted(round=2)), (3, RoundStarted(round=3))]
    store.close()


def test_an_append_that_keeps_losing_its_connection_gives_up_and_stores_nothing(
        pg_url: str) -> None:
    store = SlowStore(pg_url)
    store.append_patience = 1.0
    kept = sealed("t1", [RoundStarted(round=1)])
    store.append(kept)
    store.gated = True
    stop = threading.Event()
    with Gate(pg_url) as gate, pytest.raises(StoreError) as caught:
        killer = terminate_until(gate, stop)
        killer.start()
        began = time.monotonic()
        try:
            store.append(sealed("t1", [RoundStarted(round=2), RoundStarted(round=3)], 1))
        finally:
            stop.set()
            killer.join()
    assert time.monotonic() - began >= 0.7  # it kept trying, 0.1 + 0.2 + 0.4 s apart at least
    message = str(caught.value)
    assert message.startswith(
        f"{name_of(pg_url)}: append failed: the connection was lost before turn t1 seq 2-3 was "
        "committed; nothing of it was stored (")
    assert "\n" not in message and PASSWORD not in message
    store.gated = False
    assert store.read("t1") == kept
    store.append(sealed("t1", [RoundStarted(round=2)], 1))  # a new connection, the same store
    assert [e.seq for e in store.read("t1")] == [1, 2]
    store.close()


class LostCommit(PostgresStore):
    """Loses the connection of its first append: after the server committed it (`committed`),
    or before the round reached the server."""

    committed = True
    lost = 0

    def _write(self, connection: psycopg.Connection[Any], params: list[Any]) -> Any:
        if self.lost:
            return super()._write(connection, params)
        self.lost += 1
        if self.committed:
            super()._write(connection, params)
            connection.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        with psycopg.connect(self.url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [connection.info.backend_pid])
        wait_gone(self.url, connection.info.backend_pid)
        return super()._write(connection, params)  # lost: the server never saw it


@pytest.mark.parametrize("committed", [True, False], ids=["committed", "not-committed"])
def test_a_commit_whose_answer_was_lost_is_settled_by_reading_the_turn(
        pg_url: str, committed: bool) -> None:
    """Whether the server committed is read back: a round it committed is not written again
    (no `ConcurrencyError`, no copy); a round it did not is tried again and stored once."""
    store = LostCommit(pg_url)
    store.committed = committed
    round_ = sealed("t1", [RoundStarted(round=1), RoundStarted(round=2)])
    store.append(round_)
    assert store.lost == 1
    assert store.read("t1") == round_
    store.append(sealed("t1", [RoundStarted(round=3)], 2))  # the turn goes on
    assert [e.seq for e in store.read("t1")] == [1, 2, 3]
    store.close()


class LostWhileWaiting(PostgresStore):
    """Loses its first append's connection while the server still runs the insert (it waits
    on another session's uncommitted row at the same seq): the client is gone, the server's
    process is not, and it commits the round once that row is rolled back."""

    lose = False
    writes = 0
    settling: threading.Event

    def _settle(self, *args: Any) -> bool | None:
        self.settling.set()
        return super()._settle(*args)

    def _write(self, connection: psycopg.Connection[Any], params: list[Any]) -> Any:
        self.writes += 1
        if not self.lose or self.writes > 1:
            return super()._write(connection, params)
        pid = connection.info.backend_pid
        failed: list[BaseException] = []

        def insert() -> None:
            try:
                super(LostWhileWaiting, self)._write(connection, params)
            except BaseException as error:
                failed.append(error)

        waiting = threading.Thread(target=insert)
        waiting.start()
        wait_for_backends(self.url, f"pid = {pid} AND wait_event_type = 'Lock'")
        socket.socket(fileno=os.dup(connection.pgconn.socket)).shutdown(socket.SHUT_RDWR)
        waiting.join()
        assert failed and isinstance(failed[0], psycopg.OperationalError), failed
        raise failed[0]


def test_a_round_whose_server_process_outlives_the_connection_is_read_back_once_it_ends(
        pg_url: str) -> None:
    """Reading the round back while the server still runs its insert would find nothing, and
    the round would be sent again: the store waits for that process to finish, then finds the
    round stored — sent once, stored once."""
    store = LostWhileWaiting(pg_url)
    store.append(sealed("t1", [RoundStarted(round=1)]))
    squatter = psycopg.connect(pg_url)  # not autocommit: its row stays uncommitted
    squatter.execute("INSERT INTO events (turn_id, seq, kind, version, at, body) "
                     "VALUES ('t1', 2, 'RoundStarted', 1, '', '{}')")
    store.lose, store.writes, store.settling = True, 0, threading.Event()

    def release() -> None:  # once the store reads the round back, and not at once
        store.settling.wait(30)
        time.sleep(0.5)
        squatter.rollback()

    releasing = threading.Thread(target=release)
    releasing.start()
    store.append(sealed("t1", [RoundStarted(round=2)], 1))
    releasing.join()
    squatter.close()
    assert store.writes == 1  # not sent again
    assert [(e.seq, e.event) for e in store.read("t1")] == [
        (1, RoundStarted(round=1)), (2, RoundStarted(round=2))]
    store.close()


def test_after_a_lost_connection_every_pooled_session_is_checked(pg_url: str) -> None:
    """The server ended every session (a restart, a failover): the append that finds out goes
    on on a new connection, and the reads that follow at once do not get a dead session the
    pool would otherwise lend without a look (one used a moment ago)."""
    store = PostgresStore(pg_url)
    store.append(sealed("t1", [RoundStarted(round=1)]))
    assert [e.seq for e in store.read("t1")] == [1]
    pids = wait_for_backends(pg_url, "application_name = 'fuseforks'", 2)
    assert len(pids) == 2  # one reading session, one writing session
    with psycopg.connect(pg_url, autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            wait_gone(pg_url, pid)
    store.append(sealed("t1", [RoundStarted(round=2)], 1))
    assert [e.seq for e in store.read("t1")] == [1, 2]
    store.close()
