"""Write-ahead without a thread hop: a store commits on the event loop when it can do so without
waiting (`TurnLog.append_now`), and says False — storing nothing — when it would have to wait.
And the pixel guard looks at each event the engine sealed once, not again in the store."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from fuseforks.bus.subscribers import StoreWriter
from fuseforks.core.errors import ConcurrencyError, PixelLeakError, StoreError
from fuseforks.events import privacy, sequencer
from fuseforks.events.codec import Envelope, encode_event
from fuseforks.events.secrets import Secrets
from fuseforks.events.sequencer import FixedClock, Sealed, Sequencer
from fuseforks.events.types import RoundStarted, ToolResultRecorded, TurnEnded
from fuseforks.stores import rows, sqlite
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import TurnLog
from tests.stores.test_contract import png_base64, sealed

KEY = "sk-ant-api03-secret-value-0123456789"


def rounds(turn_id: str, first: int, count: int) -> Sealed:
    return Sequencer(turn_id, FixedClock(), first - 1).seal(
        [RoundStarted(round=n) for n in range(first, first + count)])


# --- the contract: whole or nothing ---------------------------------------------------------------


def test_append_now_stores_the_whole_batch_or_nothing(log: TurnLog) -> None:
    batch = rounds("t1", 1, 3)
    if log.append_now(batch):
        assert log.read("t1") == batch
    else:  # a store that cannot commit without waiting (a network) stores nothing here
        assert log.read("t1") == []
        log.append(batch)
    assert log.last_seq("t1") == 3
    stale = rounds("t1", 3, 1)  # seq 3 is taken: the optimistic-concurrency guard holds here too
    with pytest.raises(ConcurrencyError):
        if not log.append_now(stale):
            log.append(stale)
    assert log.read("t1") == batch


def test_memory_and_sqlite_commit_in_the_calling_thread(tmp_path: Path) -> None:
    for store in (MemoryStore(), SqliteStore(tmp_path / "s.db")):
        with store:
            assert store.append_now(rounds("t1", 1, 2)) is True
            assert [e.seq for e in store.read("t1")] == [1, 2]


# --- SQLite: never waits on the loop --------------------------------------------------------------


def test_sqlite_gives_up_at_once_on_another_writers_lock_and_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        store.append(rounds("t1", 1, 1))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process's write transaction
        try:
            assert store.append_now(rounds("t1", 2, 1)) is False
            assert store.last_seq("t1") == 1
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.append_now(rounds("t1", 2, 1)) is True
        assert store.last_seq("t1") == 2


def test_sqlite_gives_up_while_another_thread_is_appending(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        store._now_lock.acquire()  # another thread is in append_now on this store
        try:
            assert store.append_now(rounds("t1", 1, 1)) is False
        finally:
            store._now_lock.release()
        assert store.read("t1") == []


def test_sqlite_checkpoints_off_the_loop_every_so_many_commits(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        for n in range(1, sqlite._CHECKPOINT_EVERY + 1):
            assert store.append_now(rounds("t1", n, 1)) is True
        wal = Path(f"{path}-wal")
        before = _wal_frames(path)
        assert before > 0
        # due: the loop hands this one to a thread, which commits it and checkpoints the log
        assert store.append_now(rounds("t1", sqlite._CHECKPOINT_EVERY + 1, 1)) is False
        store.append(rounds("t1", sqlite._CHECKPOINT_EVERY + 1, 1))
        assert wal.exists()
        assert store.append_now(rounds("t1", sqlite._CHECKPOINT_EVERY + 2, 1)) is True
        assert store.last_seq("t1") == sqlite._CHECKPOINT_EVERY + 2
    with sqlite3.connect(path) as reader:
        count = reader.execute("SELECT count(*) FROM events").fetchone()[0]
    assert count == sqlite._CHECKPOINT_EVERY + 2


def _wal_frames(path: Path) -> int:
    """The frames in the write-ahead log, from its size (a 32-byte header, then frames of a
    24-byte header and a page each)."""
    size = Path(f"{path}-wal").stat().st_size
    with sqlite3.connect(path) as reader:
        page = reader.execute("PRAGMA page_size").fetchone()[0]
    return max(0, (size - 32) // (24 + page))


def test_a_checkpoint_ran_on_the_thread_not_on_the_loop_connection(tmp_path: Path) -> None:
    """The loop's connection never checkpoints: after many commits on it, the log keeps every
    frame until the thread's turn comes."""
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        for n in range(1, sqlite._CHECKPOINT_EVERY + 1):
            assert store.append_now(rounds("t1", n, 1))
        connection = store._now_connection()
        assert connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        busy, frames, done = store.db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert (busy, frames) == (0, done)
        assert frames >= sqlite._CHECKPOINT_EVERY  # nothing had been checkpointed before


def test_a_read_only_store_never_appends_on_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    with SqliteStore(path, read_only=True) as store:
        assert store.append_now(rounds("t1", 1, 1)) is False


# --- the store writer: no thread when the store commits at once -----------------------------------


class Threads(MemoryStore):
    """A memory store that says in which thread each append ran, and can refuse to append now."""

    def __init__(self, now: bool) -> None:
        super().__init__()
        self.now = now
        self.threads: list[str] = []

    def append_now(self, envelopes: Sequence[Envelope]) -> bool:
        if not self.now:
            return False
        self.threads.append(threading.current_thread().name)
        return super().append_now(envelopes)

    def append(self, envelopes: Sequence[Envelope]) -> None:
        if not self.now:
            self.threads.append(threading.current_thread().name)
        super().append(envelopes)


@pytest.mark.parametrize("now", [True, False])
def test_the_store_writer_commits_on_the_loop_or_in_a_thread(now: bool) -> None:
    store = Threads(now)
    main = threading.current_thread().name

    async def write() -> None:
        await StoreWriter(store).handle(rounds("t1", 1, 2))

    anyio.run(write)
    assert store.last_seq("t1") == 2
    assert len(store.threads) == 1
    assert (store.threads[0] == main) is now


# --- the pixel guard, once ------------------------------------------------------------------------


@pytest.fixture
def guard_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every body the pixel guard looked at, wherever it was called from."""
    seen: list[bytes] = []
    real = privacy.find_pixel_leak

    def counting(body: bytes) -> str | None:
        seen.append(body)
        return real(body)

    monkeypatch.setattr(privacy, "find_pixel_leak", counting)
    monkeypatch.setattr(rows, "find_pixel_leak", counting)
    return seen


def test_sealing_checks_each_event_once_and_the_store_keeps_those_bodies(
        tmp_path: Path, guard_calls: list[bytes]) -> None:
    events = [RoundStarted(round=1), TurnEnded(stop="answered", answer="a red frame", rounds=1)]
    batch = Sequencer("t1", FixedClock()).seal(events)
    assert guard_calls == [encode_event(e) for e in events]
    assert batch.bodies == guard_calls
    with SqliteStore(tmp_path / "s.db") as store:
        assert store.append_now(batch)
        assert len(guard_calls) == 2  # not looked at again
        stored = store.db.execute("SELECT body FROM events ORDER BY seq").fetchall()
    assert [body for (body,) in stored] == [b.decode() for b in batch.bodies]


def test_a_batch_the_store_did_not_see_sealed_is_checked_whole(
        guard_calls: list[bytes]) -> None:
    batch = list(rounds("t1", 1, 3))  # a plain list: an import, a stream from elsewhere
    guard_calls.clear()
    MemoryStore().append(batch)
    assert guard_calls == [encode_event(e.event) for e in batch]


def test_an_event_a_secret_changed_after_sealing_is_checked_by_the_store(
        guard_calls: list[bytes]) -> None:
    events = [RoundStarted(round=1),
              ToolResultRecorded(round=1, call_id="c", name="t", ok=True, body=f"token {KEY}")]
    batch = Sequencer("t1", FixedClock()).seal(events)
    published = Secrets({"ANTHROPIC_API_KEY": KEY}).batch(batch)
    assert isinstance(published, Sealed)
    assert published.bodies[0] == batch.bodies[0]
    assert published.bodies[1] is None
    guard_calls.clear()
    store = MemoryStore()
    store.append(published)
    assert guard_calls == [encode_event(published[1].event)]
    assert b"[secret: ANTHROPIC_API_KEY]" in guard_calls[0]


def test_sealing_refuses_pixels_before_taking_a_seq() -> None:
    seq = Sequencer("t1", FixedClock())
    leaking = ToolResultRecorded(round=1, call_id="c", name="t", ok=True,
                                 body=f"frame: {png_base64()}")
    with pytest.raises(PixelLeakError, match="refusing to record ToolResultRecorded"):
        seq.seal([RoundStarted(round=1), leaking])
    assert seq.last_seq == 0
    assert [e.seq for e in seq.seal([RoundStarted(round=1)])] == [1]


def test_a_sealed_batch_holds_one_body_per_envelope() -> None:
    envelopes = sealed("t1", [RoundStarted(round=1)])
    with pytest.raises(ValueError, match="one body per envelope"):
        sequencer.Sealed(envelopes, [])


# --- what the review found: a failing checkpoint, a closed store, SQLite's extended codes ---------


class _FailingCheckpoints:
    """The store's connection, except that a checkpoint fails as on a full disk."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql.startswith("PRAGMA wal_checkpoint"):
            raise sqlite3.OperationalError("disk I/O error")
        return self._connection.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._connection, name)


def test_a_failing_checkpoint_never_fails_the_append(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        real = store.db.conn
        store.db.conn = _FailingCheckpoints(real)  # type: ignore[assignment]
        store._commits = sqlite._CHECKPOINT_EVERY
        try:
            store.append(rounds("t1", 1, 1))  # the checkpoint fails: the append does not
            store.append(rounds("t1", 2, 1))
        finally:
            store.db.conn = real
        assert store.last_seq("t1") == 2
        assert store.append_now(rounds("t1", 3, 1)) is True  # and the loop commits again
    assert "a checkpoint of the write-ahead log failed (disk I/O error)" in caplog.text


def test_a_closed_store_appends_nothing_on_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store.append_now(rounds("t1", 1, 1))
    store.close()
    assert store.append_now(rounds("t1", 2, 1)) is False
    with pytest.raises(StoreError) as caught:  # fuseforks says so, not sqlite3
        store.append(rounds("t1", 2, 1))
    assert str(caught.value) == f"{path}: the store is closed"
    with SqliteStore(path, read_only=True) as reader:
        assert reader.last_seq("t1") == 1


def test_every_busy_code_sends_the_append_to_a_thread() -> None:
    for code in (5, 5 | 1 << 8, 5 | 2 << 8, 5 | 3 << 8):  # BUSY, _RECOVERY, _SNAPSHOT, _TIMEOUT
        error = sqlite3.OperationalError("database is locked")
        error.sqlite_errorcode = code  # type: ignore[attr-defined]
        assert sqlite._busy(error)
    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorcode = 10  # type: ignore[attr-defined]
    assert not sqlite._busy(error)
