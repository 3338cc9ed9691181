"""The SQLite event store: one real file through sqlite-utils, WAL, one transaction per append.

What it shares with the PostgreSQL store — the checks at open, the pixel guard, reading with
upcasting, the audit queries — is the SQL base's (`fuseforks.stores.sql`); this module holds the
file's connection and its dialect.

The schema is created explicitly at open and stamped with a store version in `fuseforks_meta`, so a
file from a newer fuseforks, a file of someone else's, or a file that is not SQLite at all is refused
with a message naming it — and never written to. Events are stored as their JSON body beside the
columns a person or a view needs (`turn_id`, `seq`, `kind`, `version`, `at`); there are no pixels to
store, because no event can hold any.

Opened `read_only`, the store is read without ever writing: not the file, not a `-wal` or `-shm`
beside it, not an upgrade — so an auditor with read access only (a file they cannot write, in a
directory they cannot write) can read it. SQLite's `mode=ro` alone is not enough for that: a WAL
database needs its `-shm` file, and a read-only reader creates one (and a `-wal`) when the directory
lets it, or fails when it does not. So:

- when no `-wal` file with content lies beside the store, every committed event is in the main
  file, and it is opened `immutable=1` (no locks, no `-shm`, no `-wal`). Immutable is only safe while
  the main file does not change, and a writer may start at any time and checkpoint into it; so the
  main file's inode, size and modification time are taken at open and checked after every query,
  and a query that saw the file change is run again on a fresh connection. (A writer that only
  appends to its `-wal` leaves the main file as it was: the reader sees the store as it was when
  opened.)
- when a `-wal` with content exists (a writer is running, or one died before checkpointing), the
  store is opened `mode=ro` with SQLite's own locking, which uses the `-shm` file; if that cannot be
  shared, the error says what the owner can run.

A read-only open of a store with an older table layout reads it as it is: the events table has not
changed, and the audit, whose views and index an older layout lacks or gets wrong, is folded from
the events instead (`fuseforks.projections.audit`, the rows the views are held equal to).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from fuseforks.core.errors import ConcurrencyError, CorruptStoreError, StoreError
from fuseforks.events.codec import Envelope
from fuseforks.projections import read_model
from fuseforks.projections.read_model import ReadRows
from fuseforks.stores import read_tables
from fuseforks.stores.dialect import Dialect
from fuseforks.stores.filesystem import on_read_only_mount
from fuseforks.stores.row_cache import Prepared, RowCache
from fuseforks.stores.rows import guarded_bodies, turn_envelopes
from fuseforks.stores.sql import EVENTS, META, SqlStore
from fuseforks.stores.store import check_continuation

logger = logging.getLogger("fuseforks.store")

SQLITE_STORE_VERSION = 5
"""Version of the SQLite table layout (not of the events, which carry their own version; not of
the PostgreSQL layout, which counts its own: `POSTGRES_STORE_VERSION`).
1: events only. 2: adds the image index (kept by triggers) and the audit views. 3: the views read
events of both event versions 1 and 2 and say how each turn ended; the image index holds one row
per image and turn; an index of turns by conversation. 4: the index of every event's kind is
replaced by one small index per kind read across turns (`INDEXED_KINDS`). 5: the read model's
tables (`fuseforks.stores.read_tables`), written with the events, replace the image index, its
triggers and the views that derived the audit in SQL. An older store is upgraded in place when
opened for writing: what was derived is dropped and built again from the events; no event is
rewritten. Opened read-only, it is read as it is (its audit folded from the events)."""

_WAL_HEADER = b"\x02\x02"
"""Bytes 18-19 of the database header (write and read format) of a database in WAL mode."""
_IMMUTABLE_TRIES = 3
_CONVERSATION_INDEX = (
    f"CREATE INDEX IF NOT EXISTS events_by_conversation ON {EVENTS}"
    "(json_extract(body, '$.conversation_id')) WHERE kind = 'TurnStarted'"
)
"""Finds a conversation's turns without reading every turn (the agent does it before each turn)."""
INDEXED_KINDS = ("PlacementLearned", "ResultSent")
"""The kinds read across turns (what an agent has learned of placements, as it starts; the
images sent to gateway clients, for the audit): each has an index of its own, by time. Reading
another kind across turns reads the whole table."""
_KIND_INDEXES = [f"CREATE INDEX IF NOT EXISTS events_{kind} ON {EVENTS}(at) WHERE kind = '{kind}'"
                 for kind in INDEXED_KINDS]
_SELECTED = "turn_id, seq, version, at, CAST(body AS BLOB)"
"""An event's columns as the base decodes them: as a BLOB the body reaches msgspec without a
round trip through a Python str."""

SQLITE = Dialect(
    mark="?",
    tables="SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    version=f"SELECT value FROM {META} WHERE key = 'store_version'",
    rows_version=f"SELECT value FROM {META} WHERE key = 'read_model_version'",
    read=f"SELECT seq, version, at, CAST(body AS BLOB) FROM {EVENTS} "
         "WHERE turn_id = ? AND seq > ? ORDER BY seq",
    prefix=f"SELECT seq, version, at, CAST(body AS BLOB) FROM {EVENTS} "
           "WHERE turn_id = ? AND seq <= ? ORDER BY seq",
    tail=f"SELECT max(seq) FROM {EVENTS} WHERE turn_id = ?",
    turns=f"SELECT turn_id, count(*), min(at), max(at) FROM {EVENTS} "
          "GROUP BY turn_id ORDER BY min(at), turn_id",
    conversation=f"SELECT {_SELECTED} FROM {EVENTS} "
                 "WHERE kind IN ('TurnStarted', 'TurnEnded') AND turn_id IN "
                 f"(SELECT turn_id FROM {EVENTS} WHERE kind = 'TurnStarted' "
                 "AND json_extract(body, '$.conversation_id') = ?) ORDER BY turn_id, seq",
    conversation_size=f"SELECT count(*) FROM {EVENTS} WHERE kind = 'TurnStarted' "
                      "AND json_extract(body, '$.conversation_id') = ?",
    of_kinds=f"SELECT {_SELECTED} FROM {EVENTS} WHERE kind IN ({{marks}}) "
             "ORDER BY at, turn_id, seq",
    text="TEXT", integer="INTEGER", boolean="INTEGER", table_options=" WITHOUT ROWID, STRICT")
"""SQLite's statements; its audit compares `since` in SQL (`strftime`)."""
_UPSERTS = [(table, read_tables.upsert(table, SQLITE)) for table in read_tables.TABLES]
_DERIVED_BEFORE_5 = [
    "DROP VIEW IF EXISTS image_deliveries", "DROP VIEW IF EXISTS image_origins",
    "DROP VIEW IF EXISTS tool_calls", "DROP TRIGGER IF EXISTS image_index_deliveries",
    "DROP TRIGGER IF EXISTS image_index_origins", "DROP TABLE IF EXISTS image_index",
]
"""What layouts 2 to 4 derived in SQL, which the read model replaces."""
_INSERT = f"INSERT INTO {EVENTS}(turn_id, seq, kind, version, at, body) VALUES (?, ?, ?, ?, ?, ?)"
_CHECKPOINT_EVERY = 64
"""Commits between two checkpoints of the write-ahead log. The connection that commits on the
event loop never checkpoints (a checkpoint syncs the files to disk: milliseconds the loop must
not wait); every this many commits, the next append goes to a worker thread, which checkpoints
and then commits (so that its commit, not the loop's next one, starts the log anew and syncs its
header). A turn's commits are a few pages each: the log stays about as short as SQLite's own
default would keep it (1,000 pages); a store written with larger batches keeps a longer one."""

Stamp = tuple[int, int, int]


def _busy(error: sqlite3.Error) -> bool:
    """SQLITE_BUSY, or one of its extended codes (another process recovering the log after a
    crash, a timeout)."""
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_BUSY


def _write_rows(connection: sqlite3.Connection, changes: ReadRows) -> None:
    """The read model's rows an append changed, in its open write transaction."""
    for table, statement in _UPSERTS:
        rows = read_tables.values(table, changes)
        if rows:
            connection.executemany(statement, rows)


def _stamp(path: Path) -> Stamp:
    status = path.stat()
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def _has_wal_content(path: Path) -> bool:
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except FileNotFoundError:
        return False


def _in_wal_mode(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(20)[18:20] == _WAL_HEADER


class SqliteStore(SqlStore):
    """A fuseforks event store in one SQLite file. Safe to share between threads of one process.

    `read_only`: never write anything (see the module's notes); `append` is refused."""

    dialect = SQLITE
    engine = "SQLite"
    a_database = "an SQLite database"
    newest = SQLITE_STORE_VERSION

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        self.read_only = read_only
        self._lock = threading.Lock()
        self._stamp: Stamp | None = None
        """The main file as an immutable connection opened it; None for a locking connection."""
        self._now: sqlite3.Connection | None = None
        """The connection `append_now` commits on: it never waits for a lock (timeout 0) and
        never checkpoints; opened at its first use."""
        self._now_lock = threading.Lock()
        self._commits = 0
        """Commits since the last checkpoint (counted from both connections, each under its own
        lock: a count lost to a race only delays a checkpoint)."""
        self._closed = False
        self._rows = RowCache()
        self.db = sqlite_utils.Database(self._connect(), execute_plugins=False)
        try:
            self._open()
            if not read_only:
                with self._translate("open"):
                    self.db.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            self.db.conn.close()
            raise

    @classmethod
    def inspect(cls, target: Any) -> int:
        """The table layout of the file at `target`, read without writing anything: 0 when there
        is no store yet (no file, an empty file, a database without tables), where opening for
        writing creates one. Raises for a file fuseforks must not write to."""
        path = Path(target)
        if not path.exists() or path.stat().st_size == 0:
            return 0
        return super().inspect(path)

    # --- the connection -------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            try:
                return sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            except sqlite3.Error as error:
                why = "read-only file system: " if on_read_only_mount(self.path) else ""
                raise StoreError(f"{self.path}: cannot open the store ({why}{error})") from error
        try:
            immutable = _in_wal_mode(self.path) and not _has_wal_content(self.path)
            self._stamp = _stamp(self.path) if immutable else None
        except FileNotFoundError:
            raise StoreError(f"{self.path}: no such store") from None
        except OSError as error:
            raise StoreError(f"{self.path}: cannot read the store ({error.strerror})") from error
        uri = "file:" + urllib.parse.quote(str(self.path.absolute())) + "?mode=ro"
        if immutable:
            uri += "&immutable=1"
        try:
            return sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open the store ({error})") from error

    def _build(self, version: int) -> None:
        if version == 0:
            with self._translate("create the store"):
                self._create()
        else:
            with self._translate("open"):
                self._upgrade()

    def _create(self) -> None:
        self.db.enable_wal()
        self.db.execute("PRAGMA synchronous=NORMAL")
        with self.db.atomic():
            self.db[META].create(  # type: ignore[union-attr]
                {"key": str, "value": str}, pk="key", not_null={"value"}, strict=True
            )
            # Written out because sqlite-utils cannot say WITHOUT ROWID: clustering rows by
            # (turn_id, seq) makes reading a turn one contiguous range scan.
            self.db.execute(
                f"CREATE TABLE {EVENTS} ("
                "turn_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, "
                "version INTEGER NOT NULL, at TEXT NOT NULL, body TEXT NOT NULL, "
                "PRIMARY KEY (turn_id, seq)) WITHOUT ROWID, STRICT"
            )
            self.db.execute(
                f"INSERT INTO {META}(key, value) VALUES ('store_version', ?), "
                "('read_model_version', ?)",
                [str(SQLITE_STORE_VERSION), str(read_model.READ_MODEL_VERSION)]
            )
            for statement in _KIND_INDEXES:
                self.db.execute(statement)
            for statement in read_tables.create(SQLITE):
                self.db.execute(statement)
            self.db.execute(_CONVERSATION_INDEX)

    def _upgrade(self) -> None:
        """What an older layout derived is dropped; the read model's rows are built from the
        events right after (`rebuild_rows`, its version not yet stamped)."""
        with self.db.atomic():
            for statement in (*_DERIVED_BEFORE_5, *read_tables.create(SQLITE)):
                self.db.execute(statement)
            self.db.execute(_CONVERSATION_INDEX)
            self.db.execute("DROP INDEX IF EXISTS events_kind")
            for statement in _KIND_INDEXES:
                self.db.execute(statement)
            self.db.execute(
                f"UPDATE {META} SET value = ? WHERE key = 'store_version'",
                [str(SQLITE_STORE_VERSION)]
            )

    @staticmethod
    @contextmanager
    def _write(connection: sqlite3.Connection) -> Iterator[None]:
        """One write transaction that takes the write lock at its start (`BEGIN IMMEDIATE`): two
        processes appending to one turn then queue, and the later one meets the sequence check
        (`ConcurrencyError`) instead of a lock upgrade that fails as "database is locked"."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if connection.in_transaction:  # an I/O error has rolled it back already
                connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    @contextmanager
    def _translate(self, doing: str) -> Iterator[None]:
        """Turn sqlite3's errors into the project's own, naming the file."""
        try:
            yield
        except sqlite3.IntegrityError as error:
            raise ConcurrencyError(f"{self.path}: {doing}: {error}") from error
        except sqlite3.DatabaseError as error:
            message = str(error)
            if "not a database" in message or "malformed" in message:
                raise CorruptStoreError(
                    f"{self.path}: not a readable SQLite database ({message}); nothing was changed"
                ) from error
            if self.read_only and ("readonly" in message or "unable to open" in message):
                raise StoreError(
                    f"{self.path}: cannot read the store without writing: its write-ahead log "
                    f"({self.path.name}-wal) is shared through {self.path.name}-shm, which this "
                    "user cannot open or create; ask the store's owner to run "
                    f"`sqlite3 {self.path} 'PRAGMA wal_checkpoint(TRUNCATE)'` ({message})"
                ) from error
            if not self.read_only and on_read_only_mount(self.path):
                raise StoreError(f"{self.path}: {doing} failed: the store is on a read-only file "
                                 f"system ({message})") from error
            raise StoreError(f"{self.path}: {doing} failed: {message}") from error

    def _of_kinds_query(self, stored: Sequence[str]) -> tuple[str, list[str]]:
        """An indexed kind is named in the statement itself, one branch each: SQLite uses an
        index that holds one kind only for a statement that names that kind."""
        indexed = [kind for kind in stored if kind in INDEXED_KINDS]
        others = [kind for kind in stored if kind not in INDEXED_KINDS]
        branches = [f"SELECT {_SELECTED} FROM {EVENTS} WHERE kind = '{kind}'" for kind in indexed]
        if others:
            branches.append(f"SELECT {_SELECTED} FROM {EVENTS} "
                            f"WHERE kind IN ({SQLITE.marks(len(others))})")
        return " UNION ALL ".join(branches) + " ORDER BY at, turn_id, seq", others

    def _query(self, doing: str, sql: str,
               params: Sequence[Any] = ()) -> tuple[list[str], list[Any]]:
        """On an immutable connection, a query that saw the main file change under it (a writer
        checkpointed) runs again on a fresh connection."""
        with self._lock:
            for _ in range(_IMMUTABLE_TRIES):
                with self._translate(doing):
                    cursor = self.db.execute(sql, list(params))
                    names = [d[0] for d in cursor.description or ()]
                    rows = cursor.fetchall()
                if self._stamp is None or self._unchanged():
                    return names, rows
                self.db.conn.close()
                self.db = sqlite_utils.Database(self._connect(), execute_plugins=False)
        raise StoreError(f"{self.path}: the store kept changing while being read; "
                         "nothing was changed, try again")

    def _unchanged(self) -> bool:
        try:
            return _stamp(self.path) == self._stamp
        except OSError:
            return False

    def _insert(self, batch: list[Envelope], bodies: list[str]) -> None:
        with self._lock:
            if self._closed:  # said here, not in sqlite3's words (`close` sets it first)
                raise StoreError(f"{self.path}: the store is closed")
            if self._commits >= _CHECKPOINT_EVERY:
                self._checkpoint()
            try:
                with self._translate("append"), self._write(self.db.conn):
                    prepared = self._insert_rows(self.db.conn, batch, bodies)
            except BaseException:
                self._rows.forget(batch[0].turn_id if batch else "")
                raise
            self._rows.commit(prepared)
            self._commits += 1

    def _insert_rows(self, connection: sqlite3.Connection, batch: list[Envelope],
                     bodies: list[str]) -> Prepared:
        """Insert the batch and the read-model rows it changes in the open write transaction,
        if the batch continues the turn's stored tail."""
        (tail,) = connection.execute(SQLITE.tail, [batch[0].turn_id if batch else ""]).fetchone()
        check_continuation(batch, tail or 0)
        connection.executemany(_INSERT, [(e.turn_id, e.seq, e.kind, e.version, e.at, body)
                                         for e, body in zip(batch, bodies, strict=True)])

        def stored(turn_id: str, last_seq: int) -> list[Envelope]:
            return turn_envelopes(turn_id, connection.execute(SQLITE.prefix,
                                                              [turn_id, last_seq]).fetchall())

        prepared = self._rows.prepare(batch, stored)
        _write_rows(connection, prepared.changes)
        return prepared

    def _replace_rows(self) -> int:
        connection = self.db.conn
        with self._lock, self._translate("rebuild the read model"), self._write(connection):
            turns = self._rebuild_in(connection.execute, connection.executemany)
        self._rows.clear()
        return turns

    def _checkpoint(self) -> None:
        """Copy the write-ahead log into the main file, before this thread's own commit: that
        commit then starts the log anew, and pays its sync to disk here, not on the loop. A
        checkpoint that fails (a full disk) loses nothing — the log keeps every commit — and
        is tried again after as many commits; the append goes on."""
        self._commits = 0
        try:
            self.db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as error:
            logger.warning("%s: a checkpoint of the write-ahead log failed (%s); the log keeps "
                           "every commit", self.path, error)

    def append_now(self, envelopes: Sequence[Envelope]) -> bool:
        """Commits on a connection of its own that gives up at once on a lock held elsewhere
        (`SQLITE_BUSY`: another process's write, a checkpoint), and leaves the checkpoint to a
        worker thread (`_CHECKPOINT_EVERY`)."""
        if self.read_only:
            return False
        if self._commits >= _CHECKPOINT_EVERY or not self._now_lock.acquire(blocking=False):
            return False
        try:
            if self._closed:
                return False  # `append` says the store is closed
            connection = self._now_connection()
            batch = list(envelopes)
            bodies = guarded_bodies(self.name, envelopes)
            with self._translate("append"):
                try:
                    connection.execute("BEGIN IMMEDIATE")
                except sqlite3.OperationalError as error:
                    if _busy(error):
                        return False
                    raise
                try:
                    prepared = self._insert_rows(connection, batch, bodies)
                    connection.execute("COMMIT")
                except BaseException as error:
                    self._rows.forget(batch[0].turn_id if batch else "")
                    if connection.in_transaction:  # an I/O error has rolled it back already
                        connection.execute("ROLLBACK")
                    if isinstance(error, sqlite3.OperationalError) and _busy(error):
                        return False
                    raise
            self._rows.commit(prepared)
            self._commits += 1
            return True
        finally:
            self._now_lock.release()

    def _now_connection(self) -> sqlite3.Connection:
        if self._now is None:
            with self._translate("open"):
                connection = sqlite3.connect(str(self.path), check_same_thread=False, timeout=0,
                                             isolation_level=None)
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute("PRAGMA wal_autocheckpoint=0")
            self._now = connection
        return self._now

    def close(self) -> None:
        with self._now_lock:
            self._closed = True
            if self._now is not None:
                self._now.close()
                self._now = None
        with self._lock:
            self.db.close()
