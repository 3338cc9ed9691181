"""The PostgreSQL store on a real server: its layout, what it refuses, the race between writers,
a connection lost mid-append, and reading older events exactly as the SQLite store does."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fuseforks.core.errors import ConcurrencyError, CorruptStoreError, NewerSchemaError, StoreError
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import RoundStarted, ToolResultRecorded
from fuseforks.projections.read_model import READ_MODEL_VERSION
from fuseforks.stores.open import open_store
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.postgres_sql import POSTGRES_STORE_VERSION
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.urls import DatabaseUrl, redact_url
from tests.events.samples import SAMPLES
from tests.helpers import processes
from tests.stores.raw import REPLAYS, insert_postgres, insert_sqlite, raw_rows
from tests.stores.server import PASSWORD, Server

REPO = Path(__file__).resolve().parents[2]


def sealed(turn_id: str, events: list[Any], last_seq: int = 0) -> list[Envelope]:
    return Sequencer(turn_id, FixedClock("2026-11-30T00:00:00.000Z"), last_seq).seal(events)


def tables(url: str) -> list[str]:
    with psycopg.connect(url) as connection:
        return [name for (name,) in connection.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public' ORDER BY table_name")]


def name_of(url: str) -> str:
    """The URL as the store's messages show it."""
    return redact_url(url)


# --- URLs ----------------------------------------------------------------------------------------


def test_a_password_is_never_shown() -> None:
    assert redact_url("postgresql://me:s3cr%40t@db.example.com:5432/agents") == (
        "postgresql://me:***@db.example.com:5432/agents")
    assert redact_url("postgres://me@db/agents?password=s3cret&sslmode=require") == (
        "postgres://me@db/agents?password=***&sslmode=require")
    assert redact_url("postgresql:///agents?host=/run/postgresql") == (
        "postgresql:///agents?host=/run/postgresql")
    assert str(DatabaseUrl("postgresql://a:b@h/d")) == "postgresql://a:***@h/d"
    assert DatabaseUrl("postgresql://a:b@h/d").url == "postgresql://a:b@h/d"


def test_open_store_routes_urls_to_postgres_and_paths_to_sqlite(pg_url: str,
                                                              tmp_path: Path) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
    with open_store(pg_url.replace("postgresql://", "postgres://")) as store:
        assert isinstance(store, PostgresStore)
    with open_store(str(tmp_path / "s.db")) as lite:
        assert isinstance(lite, SqliteStore)


# --- layout --------------------------------------------------------------------------------------


def test_the_layout_is_created_once_with_its_version(pg_url: str) -> None:
    assert PostgresStore.inspect(pg_url) == 0
    with PostgresStore(pg_url) as store:
        store.append(sealed("t1", SAMPLES[:3]))
    assert tables(pg_url) == ["client_deliveries", "events", "fuseforks_leases", "fuseforks_meta",
                              "image_deliveries", "image_index", "image_origins",
                              "request_images", "request_outcomes", "turn_summaries"]
    with psycopg.connect(pg_url) as connection:
        assert connection.execute(
            "SELECT key, value FROM fuseforks_meta ORDER BY key").fetchall() == [
            ("read_model_version", str(READ_MODEL_VERSION)),
            ("store_version", str(POSTGRES_STORE_VERSION))]
    assert PostgresStore.inspect(pg_url) == POSTGRES_STORE_VERSION
    with PostgresStore(pg_url) as again:
        assert [e.seq for e in again.read("t1")] == [1, 2, 3]


def test_two_processes_opening_a_new_database_create_the_store_once(pg_url: str) -> None:
    script = ("import sys; from fuseforks.stores.postgres import PostgresStore; "
              "PostgresStore(sys.argv[1]).close()")
    runs = [processes.spawn([sys.executable, "-c", script, pg_url], cwd=REPO,
                             stderr=subprocess.PIPE, text=True) for _ in range(3)]
    assert [(run.wait(60), run.stderr.read() if run.stderr else "") for run in runs] == [
        (0, "")] * 3
    with psycopg.connect(pg_url) as connection:
        assert connection.execute("SELECT count(*) FROM fuseforks_meta").fetchone() == (2,)


# --- what it refuses, writing nothing -----------------------------------------------------------


def test_a_database_of_another_application_is_refused_and_left_alone(pg_url: str) -> None:
    with psycopg.connect(pg_url) as connection:
        connection.execute("CREATE TABLE invoices (id integer PRIMARY KEY)")
    for opening in (lambda: PostgresStore(pg_url), lambda: PostgresStore.inspect(pg_url),
                    lambda: PostgresStore(pg_url, read_only=True)):
        with pytest.raises(CorruptStoreError) as caught:
            opening()
        assert str(caught.value) == (
            f"{name_of(pg_url)}: a PostgreSQL database, but not a fuseforks store (it has "
            "tables ['invoices'] and no fuseforks_meta); nothing was changed")
    assert tables(pg_url) == ["invoices"]


def test_a_store_from_a_newer_fuseforks_is_refused_and_left_alone(pg_url: str) -> None:
    with PostgresStore(pg_url) as store:
        store.append(sealed("t1", SAMPLES[:2]))
    with psycopg.connect(pg_url) as connection:
        connection.execute("UPDATE fuseforks_meta SET value = '99'")
    before = tables(pg_url)
    for opening in (lambda: PostgresStore(pg_url), lambda: PostgresStore.inspect(pg_url)):
        with pytest.raises(NewerSchemaError) as caught:
            opening()
        assert str(caught.value) == (
            f"{name_of(pg_url)}: store version 99 was written by a newer fuseforks (this one "
            f"reads up to {POSTGRES_STORE_VERSION}); nothing was changed")
    assert tables(pg_url) == before
    with psycopg.connect(pg_url) as connection:
        assert connection.execute("SELECT value FROM fuseforks_meta").fetchone() == ("99",)
        assert connection.execute("SELECT count(*) FROM events").fetchone() == (2,)


def test_read_only_creates_nothing_and_writes_nothing(pg_url: str) -> None:
    with pytest.raises(CorruptStoreError, match="an empty PostgreSQL database, not a fuseforks "
                                                "store; nothing was changed"):
        PostgresStore(pg_url, read_only=True)
    assert tables(pg_url) == []
    PostgresStore(pg_url).close()
    with PostgresStore(pg_url, read_only=True) as store:
        with pytest.raises(StoreError) as caught:
            store.append(sealed("t1", SAMPLES[:1]))
        assert str(caught.value) == f"{name_of(pg_url)}: opened read-only; nothing was changed"
        assert store.turns() == []


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    url = "postgresql://me:hunter2hunter2@127.0.0.1:9/agents"
    with pytest.raises(StoreError) as caught:
        PostgresStore(url)
    message = str(caught.value)
    assert message.startswith("postgresql://me:***@127.0.0.1:9/agents: cannot connect to "
                              "PostgreSQL (")  # then libpq's reason, in its words
    assert message.endswith(")")
    assert "\n" not in message and "hunter2" not in message


def test_wrong_credentials_are_one_line_without_the_password(pg_server: Server,
                                                             pg_url: str) -> None:
    database = pg_url.rsplit("/", 1)[1]
    url = pg_server.url(database, password="not-the-password")
    with pytest.raises(StoreError) as caught:
        PostgresStore(url)
    host = url.split("@")[1].split("/")[0]
    message = str(caught.value)
    assert message.startswith(
        f"postgresql://postgres:***@{host}/{database}: cannot connect to PostgreSQL (")
    assert message.endswith(")")  # the server's reason between, in its words
    assert "\n" not in message
    assert "not-the-password" not in message
    assert PASSWORD not in message


def test_a_missing_database_is_named(pg_server: Server) -> None:
    url = pg_server.url("ff_no_such_database")
    with pytest.raises(StoreError) as caught:
        PostgresStore(url)
    message = str(caught.value)
    assert message.startswith(f"{name_of(url)}: cannot connect to PostgreSQL (")
    assert "ff_no_such_database" in message.removeprefix(f"{name_of(url)}: ")  # in the reason
    assert message.endswith(")")
    assert "\n" not in message
    assert PASSWORD not in message


# --- writers -------------------------------------------------------------------------------------


GATE = 0x6761746531
"""The advisory lock a gated append waits for, inside its transaction."""


class SlowStore(PostgresStore):
    """A writer whose commit comes late: each append waits inside its transaction, after its
    insert, `delay` seconds — or, when `gated`, until the test opens the gate (`Gate`), so that
    it stays uncommitted for exactly as long as the test needs, however slow the machine."""

    delay = 0.0
    gated = False
    insert_timeout = 600.0  # it waits at the gate as long as the test needs

    def _write(self, connection: Any, params: list[Any]) -> Any:
        with connection.transaction():
            writing = super()._write(connection, params)
            if self.delay:
                connection.execute("SELECT pg_sleep(%s)", [self.delay])
            if self.gated:
                connection.execute("SELECT pg_advisory_xact_lock_shared(%s)", [GATE])
        return writing


class Gate:
    """Closed while the test holds `GATE` in a session of its own; `open()` lets every gated
    append commit."""

    def __init__(self, url: str) -> None:
        self.url, self.database = url, url.rsplit("/", 1)[1]
        self._session: psycopg.Connection[Any] | None = psycopg.connect(url, autocommit=True)
        self._session.execute("SELECT pg_advisory_lock(%s)", [GATE])

    def waiting(self, count: int = 1) -> list[int]:
        """The server processes of the appends waiting at the gate, once there are `count`."""
        return wait_for_backends(self.url, "wait_event_type = 'Lock' AND query LIKE "
                                 "'SELECT pg_advisory_xact_lock_shared%%'", count)

    def open(self) -> None:
        if self._session is not None:
            self._session.close()  # the session's lock goes with it
            self._session = None

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.open()


def wait_for_backends(url: str, condition: str, count: int = 1) -> list[int]:
    """The process ids of the server backends of `url`'s database that meet `condition`, once
    there are `count` of them (waited for as long as it takes; two minutes as a last resort
    against a hang)."""
    database = url.rsplit("/", 1)[1]
    deadline = time.monotonic() + 120
    with psycopg.connect(url, autocommit=True) as connection:
        while True:
            rows = connection.execute(
                f"SELECT pid FROM pg_stat_activity WHERE datname = %s AND {condition}",
                [database]).fetchall()
            if len(rows) >= count:
                return [int(pid) for pid, in rows]
            assert time.monotonic() < deadline, f"no backend met {condition!r}"
            time.sleep(0.02)


def terminate_at_gate(gate: Gate, times: int, then_open: bool = False) -> threading.Thread:
    """Terminate the backend of the next `times` appends that wait at the gate (then open it)."""

    def terminate() -> None:
        for _ in range(times):
            (pid,) = gate.waiting()
            with psycopg.connect(gate.url, autocommit=True) as connection:
                connection.execute("SELECT pg_terminate_backend(%s)", [pid])
            wait_gone(gate.url, pid)
        if then_open:
            gate.open()

    return threading.Thread(target=terminate)


def wait_gone(url: str, pid: int) -> None:
    deadline = time.monotonic() + 120
    with psycopg.connect(url, autocommit=True) as connection:
        while connection.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s",
                                 [pid]).fetchone():
            assert time.monotonic() < deadline, f"backend {pid} outlived its termination"
            time.sleep(0.02)


def test_a_writer_that_loses_the_race_gets_a_concurrency_error(pg_url: str) -> None:
    """The first writer holds its round uncommitted; the second read the same tail, and its
    insert waits on the first's primary key — then fails when the first commits."""
    first = SlowStore(pg_url)
    second = PostgresStore(pg_url)
    first.append(sealed("t1", [RoundStarted(round=1)]))
    first.gated = True
    done: list[BaseException | None] = []
    caught: list[BaseException] = []

    def lose() -> None:
        try:
            second.append(sealed("t1", [RoundStarted(round=9)], 1))
        except BaseException as error:
            caught.append(error)

    with Gate(pg_url) as gate:
        slow = threading.Thread(target=lambda: done.append(
            first.append(sealed("t1", [RoundStarted(round=2), RoundStarted(round=3)], 1))))
        slow.start()
        gate.waiting()
        loser = threading.Thread(target=lose)
        loser.start()
        wait_for_backends(pg_url, "wait_event = 'transactionid'")  # on the first's insert
        gate.open()
        slow.join()
        loser.join()
    assert done == [None]
    assert [type(error) for error in caught] == [ConcurrencyError]
    assert str(caught[0]) == ("turn t1: expected seq 4, got 2 (stored tail is 3; another "
                              "writer may have appended)")
    assert [(e.seq, e.event) for e in second.read("t1")] == [
        (1, RoundStarted(round=1)), (2, RoundStarted(round=2)), (3, RoundStarted(round=3))]
    first.close()
    second.close()


def test_an_insert_that_waits_past_the_timeout_is_cancelled_and_stores_nothing(
        pg_url: str) -> None:
    """Another program's transaction holds the next seq uncommitted: the append's insert waits
    on it until the writing session's statement timeout cancels it — one line, nothing stored,
    no retry as if the connection had been lost — and the turn goes on once that transaction
    is gone."""

    class Hasty(PostgresStore):
        insert_timeout = 0.3

    store = Hasty(pg_url)
    store.append(sealed("t1", [RoundStarted(round=1)]))
    squatter = psycopg.connect(pg_url)  # not autocommit: its insert stays uncommitted
    squatter.execute("INSERT INTO events (turn_id, seq, kind, version, at, body) "
                     "VALUES ('t1', 2, 'RoundStarted', 1, '', '{}')")
    began = time.monotonic()
    with pytest.raises(StoreError) as caught:
        store.append(sealed("t1", [RoundStarted(round=2)], 1))
    assert time.monotonic() - began < 3  # cancelled once, not tried again for its patience
    message = str(caught.value)
    assert message.startswith(f"{name_of(pg_url)}: append failed: the server cancelled the "
                              "insert of turn t1 seq 2-2 (")  # then the server's reason
    assert message.endswith("; an insert may take 0.3 s); nothing of it was stored")
    squatter.rollback()
    squatter.close()
    assert [e.seq for e in store.read("t1")] == [1]
    store.append(sealed("t1", [RoundStarted(round=2)], 1))
    assert [e.seq for e in store.read("t1")] == [1, 2]
    store.close()


WRITER = """
import sys
from fuseforks.core.errors import ConcurrencyError
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import ToolResultRecorded
from fuseforks.stores.open import open_store

name, target, attempts = sys.argv[1], sys.argv[2], int(sys.argv[3])
won = lost = 0
with open_store(target) as store:
    print("ready", flush=True)
    sys.stdin.readline()  # both writers begin together, when the test says so
    for attempt in range(attempts):
        tail = store.last_seq("shared")
        events = [ToolResultRecorded(round=attempt, call_id=f"{name}-{attempt}", name=name,
                                     ok=True, body=str(i)) for i in range(10)]
        try:
            store.append(Sequencer("shared", FixedClock(), tail).seal(events))
            won += 1
        except ConcurrencyError:
            lost += 1
print(won, lost)
"""


def test_two_processes_appending_to_one_turn_leave_no_duplicate_and_no_gap(pg_url: str) -> None:
    """Each writer reads the tail and appends a round after it, as fast as it can: whichever
    loses a race gets `ConcurrencyError`, and the turn stays one unbroken sequence of whole
    rounds."""
    target = pg_url
    open_store(target).close()
    attempts = 100
    writers = [processes.spawn([sys.executable, "-c", WRITER, name, target, str(attempts)],
                               cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    results = [writer.communicate(timeout=300) for writer in writers]
    assert [(writer.returncode, err) for writer, (_, err) in zip(writers, results, strict=True)] \
        == [(0, ""), (0, "")]
    counts = [tuple(map(int, out.split())) for out, _ in results]
    assert all(won + lost == attempts for won, lost in counts)
    with open_store(target) as store:
        stored = store.read("shared")
    rounds = sum(won for won, _ in counts)
    assert [e.seq for e in stored] == list(range(1, 10 * rounds + 1))
    for start in range(0, len(stored), 10):  # each round whole, from one writer
        calls = {e.event.call_id for e in stored[start:start + 10]
                 if isinstance(e.event, ToolResultRecorded)}
        assert len(calls) == 1
    assert sum(lost for _, lost in counts) > 0, "the writers never raced"


def test_a_closed_store_says_so(pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    store = PostgresStore(pg_url)
    store.close()
    with pytest.raises(StoreError, match="the store is closed"):
        store.read("t1")
    with pytest.raises(StoreError) as caught:
        store.append(sealed("t1", [RoundStarted(round=1)]))
    assert str(caught.value) == f"{name_of(pg_url)}: the store is closed"
    # not taken for a lost connection, read back and tried again (what a library logs is its own)
    assert not [r for r in caplog.records if r.name.startswith("fuseforks")]


def test_a_store_whose_writing_sessions_cannot_open_leaves_no_pool_behind(pg_url: str) -> None:
    """The writing sessions carry options of their own (a statement timeout); refused, the store
    says why in one line and closes the pool of reading sessions it had already opened."""

    class Refused(PostgresStore):
        insert_timeout = -1.0  # the server refuses a negative statement_timeout

    database = pg_url.rsplit("/", 1)[1]

    def sessions() -> int:
        with psycopg.connect(pg_url, autocommit=True) as connection:
            (count,) = connection.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND "
                "application_name = 'fuseforks'", [database]).fetchone() or (0,)
        return int(count)

    with pytest.raises(StoreError) as caught:
        Refused(pg_url)
    message = str(caught.value)
    assert message.startswith(f"{name_of(pg_url)}: cannot connect to PostgreSQL (")
    assert "statement_timeout" in message and "\n" not in message, message
    deadline = time.monotonic() + 10
    while sessions():
        assert time.monotonic() < deadline, "the reading pool's session outlived the store"
        time.sleep(0.05)


# --- older events --------------------------------------------------------------------------------


def test_older_events_are_upcast_on_read_exactly_as_in_sqlite(pg_url: str,
                                                             tmp_path: Path) -> None:
    rows = raw_rows(REPLAYS / "v0" / "p4-anthropic-ja.jsonl",
                    *sorted((REPLAYS / "v1").glob("*.jsonl")))
    assert {version for _, _, _, version, _, _ in rows} == {0, 1}
    with SqliteStore(tmp_path / "old.db") as lite, PostgresStore(pg_url) as store:
        insert_sqlite(lite, rows)
        insert_postgres(pg_url, rows)
        turns = [t.turn_id for t in lite.turns()]
        assert [t.turn_id for t in store.turns()] == turns and len(turns) == 12
        for turn_id in turns:
            assert store.read(turn_id) == lite.read(turn_id)
            assert store.read(turn_id, after=5) == lite.read(turn_id, after=5)
        kinds = ["TurnStarted", "RequestRefused", "WireRejected400", "TurnEnded"]
        assert store.of_kinds(kinds) == lite.of_kinds(kinds)
        assert store.conversation("") == lite.conversation("")
