"""The SQLite event store: one real file through sqlite-utils, WAL, one transaction per append.

The schema is created explicitly at open and stamped with a store version in `fuseforks_meta`, so a
file from a newer fuseforks, a file of someone else's, or a file that is not SQLite at all is refused
with a message naming it — and never written to. Events are stored as their JSON body beside the
columns a person or a view needs (`turn_id`, `seq`, `kind`, `version`, `at`); there are no pixels to
store, because no event can hold any.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec
import sqlite_utils

from fuseforks.core.errors import ConcurrencyError, CorruptStoreError, NewerSchemaError, StoreError
from fuseforks.events.codec import SCHEMA_VERSION, Envelope, decode_event, encode_event
from fuseforks.events.privacy import PixelLeakError, find_pixel_leak
from fuseforks.events.types import TurnEvent
from fuseforks.projections.audit import DeliveryRow, OriginRow
from fuseforks.stores import audit_sql
from fuseforks.stores.store import TurnInfo, check_continuation

STORE_VERSION = 3
"""Version of the table layout (not of the events, which carry their own version).
1: events only. 2: adds the image index (kept by triggers) and the audit views. 3: the views read
events of both event versions 1 and 2. An older store is upgraded in place when opened: views are
created again, the index backfilled from the events; no event is rewritten."""

_decode_current = msgspec.json.Decoder(TurnEvent).decode
_META = "fuseforks_meta"
_EVENTS = "events"


class SqliteStore:
    """A fuseforks event store in one SQLite file. Safe to share between threads of one process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            connection = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open the store ({error})") from error
        self.db = sqlite_utils.Database(connection, execute_plugins=False)
        try:
            self._open()
        except BaseException:
            connection.close()
            raise

    # --- opening --------------------------------------------------------------------------------

    def _open(self) -> None:
        with self._translate("open"):
            tables = set(self.db.table_names())
            if not tables:
                self._create()
                return
            if _META not in tables:
                raise CorruptStoreError(
                    f"{self.path}: an SQLite database, but not a fuseforks store "
                    f"(it has tables {sorted(tables)} and no {_META}); nothing was changed"
                )
            row = self.db.execute(
                f"SELECT value FROM {_META} WHERE key = 'store_version'"
            ).fetchone()
            version = int(row[0]) if row else 0
            if version > STORE_VERSION:
                raise NewerSchemaError(
                    f"{self.path}: store version {version} was written by a newer fuseforks "
                    f"(this one reads up to {STORE_VERSION}); nothing was changed"
                )
            if version < 1 or _EVENTS not in tables:
                raise CorruptStoreError(f"{self.path}: incomplete fuseforks store (no events table)")
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

    def _upgrade(self) -> None:
        with self.db.atomic():
            for view in audit_sql.VIEWS:
                self.db.execute(f"DROP VIEW IF EXISTS {view}")
            for statement in audit_sql.SCHEMA:
                self.db.execute(statement)
            self.db.execute(audit_sql.BACKFILL)
            self.db.execute(
                f"UPDATE {_META} SET value = ? WHERE key = 'store_version'", [str(STORE_VERSION)]
            )

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
            raise StoreError(f"{self.path}: {doing} failed: {message}") from error

    # --- the EventStore interface ---------------------------------------------------------------

    def append(self, envelopes: Sequence[Envelope]) -> None:
        rows = []
        for e in envelopes:
            body = encode_event(e.event)
            leak = find_pixel_leak(body)
            if leak is not None:
                raise PixelLeakError(f"{self.path}: refusing to store {e.kind} #{e.seq}: it holds {leak}")
            rows.append((e.turn_id, e.seq, e.kind, e.version, e.at, body.decode()))
        with self._lock, self._translate("append"), self.db.atomic():
            turn_id = envelopes[0].turn_id if envelopes else ""
            check_continuation(envelopes, self._last_seq(turn_id))
            self.db.conn.executemany(
                f"INSERT INTO {_EVENTS}(turn_id, seq, kind, version, at, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        with self._lock, self._translate("read"):
            rows = self.db.execute(
                # As a BLOB the body reaches msgspec without a round trip through a Python str.
                f"SELECT seq, version, at, CAST(body AS BLOB) FROM {_EVENTS} "
                "WHERE turn_id = ? AND seq > ? ORDER BY seq",
                [turn_id, after],
            ).fetchall()
        if after and any(version != SCHEMA_VERSION for _, version, _, _ in rows):
            # Older events are upcast with their turn's context, which starts at seq 1.
            return [e for e in self.read(turn_id) if e.seq > after]
        decode = _decode_current
        context: dict[str, object] = {}
        return [
            Envelope(
                turn_id=turn_id,
                seq=seq,
                at=at,
                event=decode(body) if version == SCHEMA_VERSION
                else decode_event(body, version, context),
            )
            for seq, version, at, body in rows
        ]

    def last_seq(self, turn_id: str) -> int:
        with self._lock, self._translate("read"):
            return self._last_seq(turn_id)

    def _last_seq(self, turn_id: str) -> int:
        row = self.db.execute(
            f"SELECT max(seq) FROM {_EVENTS} WHERE turn_id = ?", [turn_id]
        ).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def turns(self) -> list[TurnInfo]:
        with self._lock, self._translate("list turns"):
            rows = self.db.execute(
                f"SELECT turn_id, count(*), min(at), max(at) FROM {_EVENTS} "
                "GROUP BY turn_id ORDER BY min(at), turn_id"
            ).fetchall()
        return [TurnInfo(turn_id=t, events=n, first_at=a, last_at=b) for t, n, a, b in rows]

    # --- audit (SQL over the same events; see fuseforks.projections.audit) -----------------------

    def image_origins(self, digest: str) -> list[OriginRow]:
        sql, params = audit_sql.origins_by_digest(digest)
        return msgspec.convert(self._rows(sql, params), list[OriginRow])

    def image_deliveries(self, *, digest: str | None = None, wire: str | None = None,
                         model: str | None = None, tool: str | None = None,
                         since: str | None = None) -> list[DeliveryRow]:
        sql, params = audit_sql.deliveries_where(digest, wire, model, tool, since)
        rows = self._rows(sql, params)
        for row in rows:
            row["stripped"] = bool(row["stripped"])
        return msgspec.convert(rows, list[DeliveryRow])

    def _rows(self, sql: str, params: list[str]) -> list[dict[str, object]]:
        with self._lock, self._translate("audit"):
            cursor = self.db.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
