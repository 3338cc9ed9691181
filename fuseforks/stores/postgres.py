"""The PostgreSQL event store: the same `EventStore` as `SqliteStore`, for several processes or
machines writing one record.

Synchronous, on purpose. The store interface is synchronous and every call already runs off the
event loop (`StoreWriter` appends through `anyio.to_thread`, the agent reads a conversation the
same way, the commands are synchronous), so the store uses psycopg 3's synchronous
`ConnectionPool`: each worker thread borrows a connection for one call. An async pool would force
a second, async interface onto the store — and onto every caller — for no gain.

- **Layout** (`fuseforks.stores.postgres_sql`): `events(turn_id, seq, kind, version, at, body)`
  keyed by `(turn_id, seq)`, the body as the exact text msgspec wrote, plus `tx` and `position`
  for the global order; `fuseforks_meta` holds the layout's version. It is created explicitly on
  first open and migrated explicitly (one transaction, under an advisory lock). A database with
  tables but no `fuseforks_meta` (another application's), or a store from a newer fuseforks, is
  refused with one line, and nothing is written. The store lives in the connection's current
  schema (`public` unless the URL says otherwise, e.g. `?options=-csearch_path%3Dff`).
- **Append**: one transaction per round, in two round trips (BEGIN with the insert, then
  COMMIT). One statement inserts the whole round, and only if the turn's stored tail is the seq
  just before it — the tail is checked inside the transaction, by the statement itself; a round
  that does not continue the tail stores nothing and raises `ConcurrencyError`. Two writers that
  read the same tail at once both try to insert its next seq: the primary key `(turn_id, seq)`
  makes the second one wait for the first and then fail, and it gets `ConcurrencyError` too —
  never a duplicate, never a gap. The pixel guard runs before anything is sent, as in
  `SqliteStore.append`.
- **Failure**: a connection lost while a round is written (before its commit) rolls the round
  back on the server: nothing of it is stored. Lost while committing, the round is whole or absent
  and the error says so. Every failure is a `StoreError` of one line naming the URL with its
  password replaced by `***`.
- **Global order** (`follow`): `position` is a sequence, and a sequence has gaps in commit order —
  a transaction that took position 7 may commit after the one that took 8, so a reader that
  remembered "8" would skip 7 forever. Each row also records its transaction id (`tx`, `xid8`), and
  a follower reads only rows of transactions older than the oldest one still running
  (`pg_snapshot_xmin`), ordered by `(tx, position)`: everything before that point is final, so the
  reader's position never passes an event that is still to appear. A long-running transaction
  anywhere on the server holds followers back until it ends (it does not make them skip).
- Opened `read_only`, nothing is created, migrated or written (connections run with
  `default_transaction_read_only`), and an empty database is not a store.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import msgspec
import psycopg
import psycopg.errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from fuseforks.core.errors import ConcurrencyError, CorruptStoreError, NewerSchemaError, StoreError
from fuseforks.events.codec import SCHEMA_VERSION, Envelope, encode_envelope, encode_stored
from fuseforks.events.codec import encode_event as _encode_event
from fuseforks.events.privacy import PixelLeakError, find_pixel_leak
from fuseforks.events.types import TurnEvent
from fuseforks.projections.audit import (
    AuditFilter,
    AuditRows,
    DeliveryRow,
    OriginRow,
    with_clients,
)
from fuseforks.stores import audit_sql
from fuseforks.stores import postgres_sql as sql
from fuseforks.stores.postgres_sql import STORE_VERSION, DatabaseUrl, redact_url, url_password
from fuseforks.stores.rows import envelopes, turn_envelopes
from fuseforks.stores.store import TurnInfo, check_continuation

# The pool reports a dropped connection through `logging`; unconfigured, Python would print it on
# stderr beside the store's own one-line error. An application that configures logging still
# gets the records.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

_decode_current = msgspec.json.Decoder(TurnEvent).decode
CONNECT_TIMEOUT = 10
"""Seconds to reach the server, unless the URL says `connect_timeout`."""
POOL_SIZE = 4
IDLE_CHECK = 2.0
"""Seconds after which a pooled connection is checked before it is used again."""
_LISTED = 10
_OPEN = (TransactionStatus.INTRANS, TransactionStatus.INERROR)


class Position(msgspec.Struct, frozen=True, order=True):
    """A place in the store's global order: after the event written by transaction `tx` at
    sequence `position`. `Position()` is before every event."""

    tx: int = 0
    position: int = 0


class Leadership:
    """A held advisory lock (see `PostgresStore.try_lead`)."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self._connection = connection

    def held(self) -> bool:
        """Still held: the connection that holds the lock still answers."""
        try:
            self._connection.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def release(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._connection.close()


class _EmptyDatabase(CorruptStoreError):
    """A database without a single table: no store yet."""


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class PostgresStore:
    """A fuseforks event store in a PostgreSQL database. Safe to share between threads.

    `url`: `postgresql://user:password@host:port/database` (libpq's URL form, parameters
    included). `read_only`: never write anything; `append` is refused."""

    def __init__(self, url: str | DatabaseUrl, *, read_only: bool = False,
                 pool_size: int = POOL_SIZE) -> None:
        self._setup(url, read_only)
        self._closed = threading.Event()
        with self._translate("open"), self._connect() as connection:
            self._open(connection)
        timeout = float(self._kwargs.get("connect_timeout", CONNECT_TIMEOUT))
        self._last_used: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
            weakref.WeakKeyDictionary())
        self._used_lock = threading.Lock()
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self.url, kwargs=self._kwargs, min_size=1, max_size=max(1, pool_size), open=False,
            check=self._check_idle, name="fuseforks", timeout=timeout + 20)
        with self._translate("open"):
            self._pool.open(wait=True, timeout=timeout)

    def _setup(self, url: str | DatabaseUrl, read_only: bool) -> None:
        self.url = url.url if isinstance(url, DatabaseUrl) else url
        self.name = redact_url(self.url)
        """The URL as every message shows it: without its password."""
        self.read_only = read_only
        self.layout_version = STORE_VERSION
        """The table layout as found; below STORE_VERSION only for a store opened read-only."""
        self._secret = url_password(self.url)
        self._kwargs = self._connection_options()

    @classmethod
    def inspect(cls, url: str | DatabaseUrl) -> int:
        """The layout version of the store at `url`, read without writing anything: 0 when the
        database has no table yet (opening it for writing creates the store). Raises for a
        database fuseforks must not write to, or cannot reach."""
        probe = cls.__new__(cls)
        probe._setup(url, read_only=True)
        try:
            with probe._translate("open"), probe._connect() as connection:
                probe._open(connection)
        except _EmptyDatabase:
            return 0
        return probe.layout_version

    # --- connections ----------------------------------------------------------------------------

    def _connection_options(self) -> dict[str, Any]:
        try:
            given = conninfo_to_dict(self.url)
        except psycopg.ProgrammingError as error:
            raise StoreError(f"{self.name}: not a usable PostgreSQL URL "
                             f"({self._scrub(_one_line(error))})") from None
        options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in given:
            options["connect_timeout"] = CONNECT_TIMEOUT
        if "application_name" not in given:
            options["application_name"] = "fuseforks"
        if self.read_only:
            options["options"] = " ".join(
                filter(None, [str(given.get("options", "")),
                              "-c default_transaction_read_only=on"]))
        return options

    def _connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url, **self._kwargs)

    @contextmanager
    def _connection(self, doing: str) -> Iterator[psycopg.Connection[Any]]:
        if self._closed.is_set():
            raise StoreError(f"{self.name}: the store is closed")
        with self._translate(doing), self._pool.connection() as connection:
            yield connection
            with self._used_lock:
                self._last_used[connection] = time.monotonic()

    def _check_idle(self, connection: psycopg.Connection[Any]) -> None:
        """The pool's check before it lends a connection: one that rested for a while (the
        server may have restarted, or closed it) is tried with an empty query first, and
        replaced if it fails; one used a moment ago is lent at once, without a round trip."""
        with self._used_lock:
            last = self._last_used.get(connection, 0.0)
        if time.monotonic() - last > IDLE_CHECK:
            ConnectionPool.check_connection(connection)

    def _scrub(self, text: str) -> str:
        if len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text

    @contextmanager
    def _translate(self, doing: str) -> Iterator[None]:
        """psycopg's errors as the project's own: one line, naming the URL without password."""
        try:
            yield
        except (StoreError, PixelLeakError, ValueError):
            raise
        except psycopg.errors.ReadOnlySqlTransaction as error:
            raise StoreError(f"{self.name}: {doing}: the store was opened read-only "
                             f"({self._scrub(_one_line(error))}); nothing was changed") from None
        except PoolTimeout:
            raise StoreError(f"{self.name}: {doing} failed: {self._unreachable()}") from None
        except psycopg.OperationalError as error:
            detail = self._scrub(_one_line(error))
            if doing == "open":
                raise StoreError(f"{self.name}: cannot connect to PostgreSQL ({detail})") from None
            raise StoreError(f"{self.name}: {doing} failed: {detail}") from None
        except psycopg.Error as error:
            raise StoreError(
                f"{self.name}: {doing} failed: {self._scrub(_one_line(error))}") from None

    def _unreachable(self) -> str:
        """Why no pooled connection came in time: the server's own answer, if it gives one."""
        try:
            with self._connect():
                pass
        except psycopg.Error as error:
            return f"cannot connect to PostgreSQL ({self._scrub(_one_line(error))})"
        return "no connection of the pool was free in time"

    # --- opening --------------------------------------------------------------------------------

    def _open(self, connection: psycopg.Connection[Any]) -> None:
        tables = [name for (name,) in connection.execute(sql.TABLES)]
        if not tables:
            if self.read_only:
                raise _EmptyDatabase(
                    f"{self.name}: an empty PostgreSQL database, not a fuseforks store; "
                    "nothing was changed")
            self._migrate(connection)
            return
        version = self._check(connection, tables)
        if version < STORE_VERSION:
            if self.read_only:
                self.layout_version = version
                return
            self._migrate(connection)

    def _check(self, connection: psycopg.Connection[Any], tables: list[str]) -> int:
        if sql.META not in tables:
            shown = ", ".join(repr(t) for t in tables[:_LISTED])
            more = f" and {len(tables) - _LISTED} more" if len(tables) > _LISTED else ""
            raise CorruptStoreError(
                f"{self.name}: a PostgreSQL database, but not a fuseforks store (it has tables "
                f"[{shown}]{more} and no {sql.META}); nothing was changed")
        rows = connection.execute(sql.VERSION).fetchall()
        version = int(rows[0][0]) if rows else 0
        if version > STORE_VERSION:
            raise NewerSchemaError(
                f"{self.name}: store version {version} was written by a newer fuseforks "
                f"(this one reads up to {STORE_VERSION}); nothing was changed")
        if version < 1 or sql.EVENTS not in tables:
            raise CorruptStoreError(
                f"{self.name}: incomplete fuseforks store (no events table); nothing was changed")
        return version

    def _migrate(self, connection: psycopg.Connection[Any]) -> None:
        """Create the layout, or bring it to STORE_VERSION: one transaction, under a lock, with
        the version read again inside it (another process may have just done it)."""
        with connection.transaction():
            connection.execute(sql.SCHEMA_LOCK)
            tables = [name for (name,) in connection.execute(sql.TABLES)]
            version = self._check(connection, tables) if tables else 0
            if version == STORE_VERSION:
                return
            for step in sql.MIGRATIONS[version:]:
                for statement in step:
                    connection.execute(statement)
            for statement in (*sql.DROP_DERIVED, *sql.DERIVED):
                connection.execute(statement)
            if version:
                connection.execute(sql.BACKFILL)
            connection.execute(
                f"INSERT INTO {sql.META} (key, value) VALUES ('store_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [str(STORE_VERSION)])

    # --- the EventStore interface ---------------------------------------------------------------

    def append(self, envelopes: Sequence[Envelope]) -> None:
        if self.read_only:
            raise StoreError(f"{self.name}: opened read-only; nothing was changed")
        batch = list(envelopes)
        seqs, kinds, versions, ats, bodies = [], [], [], [], []
        for e in batch:
            body = _encode_event(e.event)
            leak = find_pixel_leak(body)
            if leak is not None:
                raise PixelLeakError(
                    f"{self.name}: refusing to store {e.kind} #{e.seq}: it holds {leak}")
            seqs.append(e.seq)
            kinds.append(e.kind)
            versions.append(e.version)
            ats.append(e.at)
            bodies.append(body.decode())
        # The round's own shape first (one turn, seqs without gaps), then, on the server, that it
        # continues the stored tail: a mismatch is said against the tail actually stored.
        turn_id = batch[0].turn_id if batch else ""
        try:
            check_continuation(batch, batch[0].seq - 1 if batch else 0)
        except ConcurrencyError:
            check_continuation(batch, self.last_seq(turn_id))
            raise
        params = [turn_id, seqs, kinds, versions, ats, bodies, turn_id, batch[0].seq - 1]
        for attempt in (1, 2):
            inserted, committing, raced, lost = self._insert(params)
            if lost is None or committing or attempt == 2:
                break
            # Lost before anything was sent to commit: nothing is stored, so the round is tried
            # once more, on a connection checked first (a server restart breaks every pooled
            # connection at once, and one lent without a check fails on first use).
            with contextlib.suppress(Exception):
                self._pool.check()
        if raced:
            self._raced(batch)
        if lost is not None:
            what = f"turn {turn_id} seq {batch[0].seq}-{batch[-1].seq}"
            detail = self._scrub(_one_line(lost))
            if committing:
                raise StoreError(
                    f"{self.name}: append failed: the connection was lost while committing "
                    f"{what}, which is stored whole or not at all: read the turn to know "
                    f"({detail})") from None
            raise StoreError(
                f"{self.name}: append failed: the connection was lost before {what} was "
                f"committed; nothing of it was stored ({detail})") from None
        if inserted != len(batch):  # the stored tail was not the one this round continues
            check_continuation(batch, self.last_seq(turn_id))
            raise ConcurrencyError(f"{self.name}: turn {turn_id}: seq {batch[0].seq} does not "
                                   "continue the stored tail")

    def _insert(self, params: list[Any]
                ) -> tuple[int, bool, bool, psycopg.OperationalError | None]:
        """One try at the round's transaction: (rows inserted, whether COMMIT was sent, whether
        another writer raced it, the connection error that ended it)."""
        inserted, committing, raced = 0, False, False
        lost: psycopg.OperationalError | None = None
        with self._connection("append") as connection:
            try:
                # BEGIN and the round go in one round trip, COMMIT in a second one.
                with connection.pipeline() as pipeline:
                    connection.execute("BEGIN")
                    writing = self._write(connection, params)
                    pipeline.sync()
                    inserted = writing.rowcount
                    committing = True
                    connection.execute("COMMIT")
            except psycopg.errors.UniqueViolation:
                raced = True
            except psycopg.OperationalError as error:
                lost = error
                connection.close()  # the pool replaces a closed connection instead of lending it
            finally:
                if connection.info.transaction_status in _OPEN and not lost:
                    connection.execute("ROLLBACK")
        return inserted, committing, raced, lost

    def _write(self, connection: psycopg.Connection[Any],
               params: list[Any]) -> psycopg.Cursor[Any]:
        """Queue the round's insert (in the append's pipeline, inside its transaction); the
        cursor's row count says, once synced, how many events it stored: all or none."""
        cursor = connection.cursor()
        cursor.execute(sql.INSERT, params)
        return cursor

    def _raced(self, batch: list[Envelope]) -> None:
        """Another writer committed the same seqs between our tail check and our insert."""
        turn_id = batch[0].turn_id
        check_continuation(batch, self.last_seq(turn_id))  # raises, naming the new tail
        raise ConcurrencyError(f"{self.name}: turn {turn_id}: seq {batch[0].seq} was written by "
                               "another writer at the same time")

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        with self._connection("read") as connection:
            rows = connection.execute(sql.READ, [turn_id, after]).fetchall()
        if after and any(version != SCHEMA_VERSION for _, version, _, _ in rows):
            # Older events are upcast with their turn's context, which starts at seq 1.
            return [e for e in self.read(turn_id) if e.seq > after]
        return turn_envelopes(turn_id, rows)

    def conversation(self, conversation_id: str) -> list[Envelope]:
        """The `TurnStarted` and `TurnEnded` of every turn of a conversation (by turn, in seq)."""
        with self._connection("read") as connection:
            rows = connection.execute(sql.CONVERSATION, [conversation_id]).fetchall()
        return envelopes(rows)

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        """Every stored event of these kinds (the `kind` index finds them), oldest first."""
        with self._connection("read") as connection:
            rows = connection.execute(sql.OF_KINDS, [list(kinds)]).fetchall()
        return envelopes(rows)

    def last_seq(self, turn_id: str) -> int:
        with self._connection("read") as connection:
            row = connection.execute(sql.TAIL, [turn_id]).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def turns(self) -> list[TurnInfo]:
        with self._connection("list turns") as connection:
            rows = connection.execute(sql.TURNS).fetchall()
        return [TurnInfo(turn_id=t, events=n, first_at=a, last_at=b) for t, n, a, b in rows]

    def follow(self, after: Position | None = None,
               limit: int = 1000) -> tuple[list[Envelope], Position]:
        """Up to `limit` events after `after` (None: from the beginning) in the store's global
        order, and the position to follow from next time (`after` itself when nothing new is
        final yet).

        Every event is returned once, in an order consistent with each turn's seq; an event
        whose transaction commits late is returned late, never passed over (see the module's
        notes). Poll again with the returned position to continue."""
        placed = self.follow_placed(after, limit)
        return [e for _, e in placed], placed[-1][0] if placed else (after or Position())

    def follow_placed(self, after: Position | None = None,
                      limit: int = 1000) -> list[tuple[Position, Envelope]]:
        """`follow`, with each event's own position: a reader that checkpoints per event
        resumes exactly after the last event it handled."""
        rows, upcast = self._follow_rows(after, limit)
        return [
            (Position(tx=int(tx), position=int(position)),
             upcast[(turn_id, seq)] if version != SCHEMA_VERSION
             else Envelope(turn_id=turn_id, seq=seq, at=at, event=_decode_current(body)))
            for tx, position, turn_id, seq, version, at, body in rows
        ]

    def follow_encoded(self, after: Position | None = None,
                       limit: int = 1000) -> list[tuple[Position, str, int, bytes]]:
        """`follow_placed` for a reader that passes events on as JSON (the relay to the message
        bus): (position, turn id, seq, the envelope's JSON), built around the stored body
        without decoding it — the bytes `encode_envelope` would give."""
        rows, upcast = self._follow_rows(after, limit)
        return [
            (Position(tx=int(tx), position=int(position)), turn_id, seq,
             encode_envelope(upcast[(turn_id, seq)]) if version != SCHEMA_VERSION
             else encode_stored(turn_id, seq, version, at, body))
            for tx, position, turn_id, seq, version, at, body in rows
        ]

    def _follow_rows(self, after: Position | None, limit: int
                     ) -> tuple[list[Any], dict[tuple[str, int], Envelope]]:
        """The rows after `after`, and the upcast envelopes of those written in older versions
        (an upcaster needs the turn's earlier events)."""
        start = after or Position()
        with self._connection("follow") as connection:
            rows = connection.execute(sql.FOLLOW, [str(start.tx), start.position, limit]).fetchall()
        older = {turn_id for _, _, turn_id, _, version, _, _ in rows if version != SCHEMA_VERSION}
        return rows, {(e.turn_id, e.seq): e for turn_id in older for e in self.read(turn_id)}

    # --- audit (SQL views over the same events; see fuseforks.projections.audit) ----------------

    def audit(self, where: AuditFilter) -> AuditRows:
        """The origins of `where.digest` (none without one) and the deliveries `where` selects,
        oldest first (images sent to gateway clients from the `ResultSent` events)."""
        origins = self.image_origins(where.digest) if where.digest is not None else []
        return with_clients(AuditRows(origins=origins, deliveries=self._deliveries(where)),
                            self.of_kinds(["ResultSent"]), where)

    def image_origins(self, digest: str) -> list[OriginRow]:
        query, params = audit_sql.origins_by_digest(digest, sql.DIALECT)
        return msgspec.convert(self._rows(query, params), list[OriginRow])

    def image_deliveries(self, *, digest: str | None = None, wire: str | None = None,
                         model: str | None = None, tool: str | None = None,
                         since: str | None = None) -> list[DeliveryRow]:
        """`since`: a `fuseforks.projections.audit.since_key`."""
        return self._deliveries(
            AuditFilter(digest=digest, wire=wire, model=model, tool=tool, since=since))

    def _deliveries(self, where: AuditFilter) -> list[DeliveryRow]:
        query, params = audit_sql.deliveries_where(where, sql.DIALECT)
        rows = msgspec.convert(self._rows(query, params), list[DeliveryRow])
        return rows if where.since is None else [row for row in rows if where.keeps(row)]

    def digests(self, prefix: str) -> list[str]:
        """Every image digest of the store that starts with `prefix` (lowercase hex), sorted."""
        query, params = audit_sql.digests_with_prefix(prefix, sql.DIALECT)
        with self._connection("audit") as connection:
            return [digest for (digest,) in connection.execute(query, params)]

    def _rows(self, query: str, params: list[str]) -> list[dict[str, object]]:
        with self._connection("audit") as connection:
            cursor = connection.execute(query, params)
            names = [d.name for d in cursor.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def identity(self) -> str:
        """Which store this is, the same from every process and machine: an id drawn when it is
        first asked for and kept in the store's meta table. Readers of the bus that keep a store
        position (the relay) keep it per store, so that another store's positions never count."""
        with self._translate("identify"), self._connection("identify") as connection:
            connection.execute(
                f"INSERT INTO {sql.META} (key, value) VALUES ('store_id', %s) "
                "ON CONFLICT (key) DO NOTHING", [uuid.uuid4().hex])
            connection.commit()
            row = connection.execute(
                f"SELECT value FROM {sql.META} WHERE key = 'store_id'").fetchone()
        assert row is not None
        return str(row[0])

    def try_lead(self, name: str) -> Leadership | None:
        """Become the one holder of `name` among every process using this database (a session
        advisory lock on a connection of its own), or None when another process holds it. The
        lock goes with the connection: a holder that dies, or loses the server, lets another
        take it."""
        with self._translate("lock"):
            # A holder that vanishes without closing its socket (power loss, a partition) must
            # lose the lock in seconds, not when the server's default keepalive gives up.
            connection = psycopg.connect(
                self.url, **{**self._kwargs, "autocommit": True, "keepalives": 1,
                             "keepalives_idle": 5, "keepalives_interval": 2,
                             "keepalives_count": 3, "tcp_user_timeout": 10_000})
            try:
                connection.execute("SET statement_timeout = 5000")
                # Per schema: two stores in one database lead each their own.
                row = connection.execute(
                    "SELECT pg_try_advisory_lock(hashtext(current_schema() || ':fuseforks:' "
                    "|| %s))", [name]).fetchone()
            except BaseException:
                connection.close()
                raise
        if row is not None and row[0]:
            return Leadership(connection)
        connection.close()
        return None

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
