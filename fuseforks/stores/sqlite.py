"""The SQLite event store: one real file through sqlite-utils, WAL, one transaction per append.

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

import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import sqlite_utils

from fuseforks.core.errors import ConcurrencyError, CorruptStoreError, NewerSchemaError, StoreError
from fuseforks.events.codec import SCHEMA_VERSION, Envelope, encode_event
from fuseforks.events.privacy import PixelLeakError, find_pixel_leak
from fuseforks.projections.audit import (
    AuditFilter,
    AuditRows,
    DeliveryRow,
    OriginRow,
    audit_rows,
    digests,
    select,
    with_clients,
)
from fuseforks.stores import audit_sql
from fuseforks.stores.rows import envelopes, turn_envelopes
from fuseforks.stores.store import TurnInfo, check_continuation

STORE_VERSION = 3
"""Version of the table layout (not of the events, which carry their own version).
1: events only. 2: adds the image index (kept by triggers) and the audit views. 3: the views read
events of both event versions 1 and 2 and say how each turn ended; the image index holds one row
per image and turn; an index of turns by conversation. An older store is upgraded in place when opened for writing:
views are created again, the index backfilled from the events; no event is rewritten. Opened
read-only, it is read as it is."""

_META = "fuseforks_meta"
_EVENTS = "events"
_WAL_HEADER = b"\x02\x02"
"""Bytes 18-19 of the database header (write and read format) of a database in WAL mode."""
_IMMUTABLE_TRIES = 3
_CONVERSATION_INDEX = (
    f"CREATE INDEX IF NOT EXISTS events_by_conversation ON {_EVENTS}"
    "(json_extract(body, '$.conversation_id')) WHERE kind = 'TurnStarted'"
)
"""Finds a conversation's turns without reading every turn (the agent does it before each turn)."""

Stamp = tuple[int, int, int]


class _EmptyDatabase(CorruptStoreError):
    """An SQLite database without a single table: no store yet."""


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


class SqliteStore:
    """A fuseforks event store in one SQLite file. Safe to share between threads of one process.

    `read_only`: never write anything (see the module's notes); `append` is refused."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.layout_version = STORE_VERSION
        """The table layout as found; below STORE_VERSION only for a store opened read-only."""
        self._lock = threading.Lock()
        self._stamp: Stamp | None = None
        """The main file as an immutable connection opened it; None for a locking connection."""
        self.db = sqlite_utils.Database(self._connect(), execute_plugins=False)
        try:
            self._open()
        except BaseException:
            self.db.conn.close()
            raise

    @staticmethod
    def inspect(path: str | Path) -> int:
        """The table layout of the file at `path`, read without writing anything: 0 when there is
        no store yet (no file, an empty file, a database without tables), where opening for
        writing creates one. Raises for a file fuseforks must not write to."""
        path = Path(path)
        if not path.exists() or path.stat().st_size == 0:
            return 0
        try:
            with SqliteStore(path, read_only=True) as store:
                return store.layout_version
        except _EmptyDatabase:
            return 0

    # --- opening --------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            try:
                return sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            except sqlite3.Error as error:
                raise StoreError(f"{self.path}: cannot open the store ({error})") from error
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

    def _open(self) -> None:
        tables = {name for (name,) in self._fetch(
            "open", "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            if self.read_only:
                raise _EmptyDatabase(
                    f"{self.path}: an empty SQLite database, not a fuseforks store; "
                    "nothing was changed")
            with self._translate("create the store"):
                self._create()
            return
        if _META not in tables:
            raise CorruptStoreError(
                f"{self.path}: an SQLite database, but not a fuseforks store "
                f"(it has tables {sorted(tables)} and no {_META}); nothing was changed"
            )
        rows = self._fetch("open", f"SELECT value FROM {_META} WHERE key = 'store_version'")
        version = int(rows[0][0]) if rows else 0
        if version > STORE_VERSION:
            raise NewerSchemaError(
                f"{self.path}: store version {version} was written by a newer fuseforks "
                f"(this one reads up to {STORE_VERSION}); nothing was changed"
            )
        if version < 1 or _EVENTS not in tables:
            raise CorruptStoreError(f"{self.path}: incomplete fuseforks store (no events table)")
        if self.read_only:
            self.layout_version = version
            return
        with self._translate("open"):
            self.db.execute("PRAGMA synchronous=NORMAL")
            if version < STORE_VERSION:
                self._upgrade()

    def _create(self) -> None:
        self.db.enable_wal()
        self.db.execute("PRAGMA synchronous=NORMAL")
        with self.db.atomic():
            self.db[_META].create(  # type: ignore[union-attr]
                {"key": str, "value": str}, pk="key", not_null={"value"}, strict=True
            )
            # Written out because sqlite-utils cannot say WITHOUT ROWID: clustering rows by
            # (turn_id, seq) makes reading a turn one contiguous range scan.
            self.db.execute(
                f"CREATE TABLE {_EVENTS} ("
                "turn_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, "
                "version INTEGER NOT NULL, at TEXT NOT NULL, body TEXT NOT NULL, "
                "PRIMARY KEY (turn_id, seq)) WITHOUT ROWID, STRICT"
            )
            self.db.execute(
                f"INSERT INTO {_META}(key, value) VALUES ('store_version', ?)", [str(STORE_VERSION)]
            )
            self.db.execute(f"CREATE INDEX events_kind ON {_EVENTS}(kind)")
            for statement in audit_sql.SCHEMA:
                self.db.execute(statement)
            self.db.execute(_CONVERSATION_INDEX)

    def _upgrade(self) -> None:
        with self.db.atomic():
            for view in audit_sql.VIEWS:
                self.db.execute(f"DROP VIEW IF EXISTS {view}")
            for trigger in audit_sql.DERIVED:
                self.db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
            self.db.execute("DROP TABLE IF EXISTS image_index")
            for statement in audit_sql.SCHEMA:
                self.db.execute(statement)
            self.db.execute(audit_sql.BACKFILL)
            self.db.execute(_CONVERSATION_INDEX)
            self.db.execute(
                f"UPDATE {_META} SET value = ? WHERE key = 'store_version'", [str(STORE_VERSION)]
            )

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction that takes the write lock at its start (`BEGIN IMMEDIATE`): two
        processes appending to one turn then queue, and the later one meets the sequence check
        (`ConcurrencyError`) instead of a lock upgrade that fails as "database is locked"."""
        connection = self.db.conn
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
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
            raise StoreError(f"{self.path}: {doing} failed: {message}") from error

    def _fetch(self, doing: str, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self._query(doing, sql, params)[1]

    def _query(self, doing: str, sql: str,
               params: Sequence[Any] = ()) -> tuple[list[str], list[Any]]:
        """Run one reading query: its column names and rows. On an immutable connection, a query
        that saw the main file change under it (a writer checkpointed) runs again on a fresh
        connection."""
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

    # --- the EventStore interface ---------------------------------------------------------------

    def append(self, envelopes: Sequence[Envelope]) -> None:
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only; nothing was changed")
        rows = []
        for e in envelopes:
            body = encode_event(e.event)
            leak = find_pixel_leak(body)
            if leak is not None:
                raise PixelLeakError(f"{self.path}: refusing to store {e.kind} #{e.seq}: it holds {leak}")
            rows.append((e.turn_id, e.seq, e.kind, e.version, e.at, body.decode()))
        with self._lock, self._translate("append"), self._write():
            turn_id = envelopes[0].turn_id if envelopes else ""
            check_continuation(envelopes, self._last_seq(turn_id))
            self.db.conn.executemany(
                f"INSERT INTO {_EVENTS}(turn_id, seq, kind, version, at, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        with self._lock:
            rows = self._fetch(
                "read",
                # As a BLOB the body reaches msgspec without a round trip through a Python str.
                f"SELECT seq, version, at, CAST(body AS BLOB) FROM {_EVENTS} "
                "WHERE turn_id = ? AND seq > ? ORDER BY seq",
                [turn_id, after],
            )
        if after and any(version != SCHEMA_VERSION for _, version, _, _ in rows):
            # Older events are upcast with their turn's context, which starts at seq 1.
            return [e for e in self.read(turn_id) if e.seq > after]
        return turn_envelopes(turn_id, rows)

    def conversation(self, conversation_id: str) -> list[Envelope]:
        """The `TurnStarted` and `TurnEnded` of every turn of a conversation (by turn, in seq)."""
        with self._lock:
            rows = self._fetch(
                "read",
                f"SELECT turn_id, seq, version, at, CAST(body AS BLOB) FROM {_EVENTS} "
                "WHERE kind IN ('TurnStarted', 'TurnEnded') AND turn_id IN "
                f"(SELECT turn_id FROM {_EVENTS} WHERE kind = 'TurnStarted' "
                "AND json_extract(body, '$.conversation_id') = ?) ORDER BY turn_id, seq",
                [conversation_id],
            )
        return envelopes(rows)

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        """Every stored event of these kinds (the `kind` index finds them), oldest first."""
        marks = ", ".join("?" for _ in kinds)
        with self._lock:
            rows = self._fetch(
                "read",
                f"SELECT turn_id, seq, version, at, CAST(body AS BLOB) FROM {_EVENTS} "
                f"WHERE kind IN ({marks}) ORDER BY at, turn_id, seq",
                list(kinds),
            )
        return envelopes(rows)

    def last_seq(self, turn_id: str) -> int:
        with self._lock:
            return self._last_seq(turn_id)

    def _last_seq(self, turn_id: str) -> int:
        rows = self._fetch("read", f"SELECT max(seq) FROM {_EVENTS} WHERE turn_id = ?", [turn_id])
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    def turns(self) -> list[TurnInfo]:
        with self._lock:
            rows = self._fetch(
                "list turns",
                f"SELECT turn_id, count(*), min(at), max(at) FROM {_EVENTS} "
                "GROUP BY turn_id ORDER BY min(at), turn_id",
            )
        return [TurnInfo(turn_id=t, events=n, first_at=a, last_at=b) for t, n, a, b in rows]

    # --- audit (SQL over the same events; see fuseforks.projections.audit) -----------------------

    @property
    def _audit_in_sql(self) -> bool:
        """Whether the image index and the views can answer: not in an older layout (read-only)."""
        return self.layout_version == STORE_VERSION

    def audit(self, where: AuditFilter) -> AuditRows:
        """The origins of `where.digest` (none without one) and the deliveries `where` selects,
        oldest first (images sent to gateway clients from the `ResultSent` events)."""
        if not self._audit_in_sql:
            return select(self._folded(), where)
        origins = self.image_origins(where.digest) if where.digest is not None else []
        return with_clients(AuditRows(origins=origins, deliveries=self._deliveries(where)),
                            self.of_kinds(["ResultSent"]), where)

    def image_origins(self, digest: str) -> list[OriginRow]:
        if not self._audit_in_sql:
            return self.audit(AuditFilter(digest=digest)).origins
        sql, params = audit_sql.origins_by_digest(digest)
        return msgspec.convert(self._rows(sql, params), list[OriginRow])

    def image_deliveries(self, *, digest: str | None = None, wire: str | None = None,
                         model: str | None = None, tool: str | None = None,
                         since: str | None = None) -> list[DeliveryRow]:
        """`since`: a `fuseforks.projections.audit.since_key`."""
        where = AuditFilter(digest=digest, wire=wire, model=model, tool=tool, since=since)
        if not self._audit_in_sql:
            return self.audit(where).deliveries
        return self._deliveries(where)

    def _deliveries(self, where: AuditFilter) -> list[DeliveryRow]:
        sql, params = audit_sql.deliveries_where(where)
        rows = self._rows(sql, params)
        for row in rows:
            row["stripped"] = bool(row["stripped"])
        return msgspec.convert(rows, list[DeliveryRow])

    def digests(self, prefix: str) -> list[str]:
        """Every image digest of the store that starts with `prefix` (lowercase hex), sorted."""
        if not self._audit_in_sql:
            return sorted(d for d in digests(self._folded()) if d.startswith(prefix))
        sql, params = audit_sql.digests_with_prefix(prefix)
        with self._lock:
            return [digest for (digest,) in self._fetch("audit", sql, params)]

    def _folded(self) -> AuditRows:
        return audit_rows(e for info in self.turns() for e in self.read(info.turn_id))

    def _rows(self, sql: str, params: list[str]) -> list[dict[str, object]]:
        with self._lock:
            names, rows = self._query("audit", sql, params)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
