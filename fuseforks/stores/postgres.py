"""The PostgreSQL event store: the same `EventStore` as `SqliteStore`, for several processes or
machines writing one record, and an `OrderedRecord` a relay follows in commit order.

What it shares with the SQLite store — the checks at open, the pixel guard, reading with
upcasting, the audit queries — is the SQL base's (`fuseforks.stores.sql`); this module holds the
connections (a pool for reading, one for writing) and what only PostgreSQL does: the append's
server-side tail check, its answer to a lost connection, and the global order.

Synchronous, on purpose. The store interface is synchronous and every call already runs off the
event loop (`StoreWriter` appends through `anyio.to_thread` — this store never commits on the
loop, its `append_now` says False: a network round trip can wait on anything —, the agent reads a
conversation the same way, the commands are synchronous), so the store uses psycopg 3's
synchronous `ConnectionPool`: each worker thread borrows a connection for one call. Appends
borrow from a pool of their own, whose sessions cancel a statement after `INSERT_TIMEOUT`; reads
(an audit can take long) borrow from the other. An async pool would force a second, async
interface onto the store — and onto every caller — for no gain.

- **Layout** (`fuseforks.stores.postgres_sql`): `events(turn_id, seq, kind, version, at, body)`
  keyed by `(turn_id, seq)`, the body as the exact text msgspec wrote, plus `tx` and `position`
  for the global order; `fuseforks_meta` holds the layout's version (`POSTGRES_STORE_VERSION`).
  It is created explicitly on first open and migrated explicitly (one transaction, under an
  advisory lock). A database with tables but no `fuseforks_meta` (another application's), or a
  store from a newer fuseforks, is refused with one line, and nothing is written. The store lives in the connection's current
  schema (`public` unless the URL says otherwise, e.g. `?options=-csearch_path%3Dff`).
- **Append**: one statement per round, which the session commits as its own transaction: one
  round trip, with no transaction left open between two of them. It inserts the whole round,
  and only if the turn's stored tail is the seq just before it — the tail is checked by the
  statement itself; a round that does not continue the tail stores nothing and raises
  `ConcurrencyError`. Two writers that
  read the same tail at once both try to insert its next seq: the primary key `(turn_id, seq)`
  makes the second one wait for the first and then fail, and it gets `ConcurrencyError` too —
  never a duplicate, never a gap. The pixel guard runs before anything is sent (the SQL base's
  `append`).
- **Failure**: a connection lost while a round is written leaves the round whole or absent on
  the server, and only the server knows which: on a new connection the store waits until the
  session the round was sent on has stopped running it, reads its seqs back, then returns
  (stored as sent) or tries again, for up to `APPEND_PATIENCE` seconds
  (`fuseforks.stores.postgres_append`). Every failure is a `StoreError` of one line naming the
  URL with its password replaced by `***`.
- **Global order** (`follow`): `position` is a sequence, and a sequence has gaps in commit order —
  a transaction that took position 7 may commit after the one that took 8, so a reader that
  remembered "8" would skip 7 forever. Each row also records its transaction id (`tx`, `xid8`), and
  a follower reads only rows of transactions older than the oldest one still running
  (`pg_snapshot_xmin`), ordered by `(tx, position)`: everything before that point is final, so the
  reader's position never passes an event that is still to appear. A long-running transaction
  anywhere on the server holds followers back until it ends (it does not make them skip), so the
  store's own are kept short: an append is one statement, which the server cancels after
  `INSERT_TIMEOUT` (5 s), so a writer of this store that stops holds followers back about 5 s at
  most (the commit's own sync comes on top). (A session on the same writing options left idle
  inside a transaction — another program's — is ended after `IDLE_IN_WRITE`.)
- Opened `read_only`, nothing is created, migrated or written (connections run with
  `default_transaction_read_only`), and an empty database is not a store.

Leases — who owns a turn, or the relay — live in the store's database (`fuseforks_leases`,
`fuseforks.stores.leases`), reached on a session of their own; the store's part is the fence: an
append made under a turn's lease (`fence_of`) is stored only while the lease is at the epoch its
writer took it at, checked in the append's one statement.
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
from typing import Any, NamedTuple

import msgspec
import psycopg
import psycopg.errors
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from fuseforks.core.errors import ConcurrencyError, LeaseLost, StoreError
from fuseforks.events.codec import SCHEMA_VERSION, Envelope, encode_envelope, encode_stored
from fuseforks.projections import read_model
from fuseforks.stores import postgres_sql as sql
from fuseforks.stores import read_tables
from fuseforks.stores.leases import Fence
from fuseforks.stores.postgres_append import (
    APPEND_PATIENCE,
    INSERT_TIMEOUT,
    POOL_WAIT,
    Attempt,
    Patience,
    connect_timeout,
    settled,
)
from fuseforks.stores.postgres_database import CONNECT_TIMEOUT, Database, one_line
from fuseforks.stores.postgres_sql import POSTGRES, POSTGRES_STORE_VERSION
from fuseforks.stores.row_cache import Prepared, RowCache
from fuseforks.stores.rows import decode_current, turn_envelopes
from fuseforks.stores.sql import SqlStore
from fuseforks.stores.store import OrderedStore, Position, check_continuation
from fuseforks.stores.urls import DatabaseUrl

# The pool reports a dropped connection through `logging`; unconfigured, Python would print it on
# stderr beside the store's own one-line error. An application that configures logging still
# gets the records.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

logger = logging.getLogger("fuseforks.store")

POOL_SIZE = 4
IDLE_CHECK = 2.0
"""Seconds after which a pooled connection is checked before it is used again."""
_OPEN = (TransactionStatus.INTRANS, TransactionStatus.INERROR)


_json = msgspec.json.Encoder()


class Round(NamedTuple):
    """A round's one statement (the events and the read-model rows they change) and its
    parameters."""

    statement: str
    params: list[Any]
    events: int
    """How many events it stores (all or none)."""
    fence: Fence | None = None
    """The lease it is fenced by, if any."""


class PostgresStore(SqlStore, OrderedStore):
    """A fuseforks event store in a PostgreSQL database. Safe to share between threads.

    `url`: `postgresql://user:password@host:port/database` (libpq's URL form, parameters
    included). `read_only`: never write anything; `append` is refused."""

    dialect = POSTGRES
    engine = "PostgreSQL"
    insert_timeout = INSERT_TIMEOUT
    append_patience = APPEND_PATIENCE
    a_database = "a PostgreSQL database"
    newest = POSTGRES_STORE_VERSION

    def __init__(self, url: str | DatabaseUrl, *, read_only: bool = False,
                 pool_size: int = POOL_SIZE) -> None:
        self.database = Database(url, read_only=read_only)
        self.url = self.database.url
        self.name = self.database.name
        self.read_only = read_only
        self._closed = threading.Event()
        self._rows = RowCache()
        self._opening: psycopg.Connection[Any] | None = None
        """The connection the store is checked and built on while it opens."""
        with self._translate("open"), self.database.connect() as connection:
            self._opening = connection
            try:
                self._open()
            finally:
                self._opening = None
        timeout = float(self.database.options.get("connect_timeout", CONNECT_TIMEOUT))
        self._last_used: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
            weakref.WeakKeyDictionary())
        self._used_lock = threading.Lock()
        self._pool = self._pool_of(self.database.options, pool_size, timeout, "fuseforks")
        self._writers = None
        if not read_only:
            try:
                self._writers = self._pool_of(
                    self.database.writing(statement_timeout=self.insert_timeout), pool_size,
                    timeout, "fuseforks-writes")
            except BaseException:
                self._pool.close()
                raise

    def _pool_of(self, options: dict[str, Any], size: int, timeout: float,
                 name: str) -> ConnectionPool[psycopg.Connection[Any]]:
        pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self.url, kwargs=options, min_size=1, max_size=max(1, size), open=False,
            check=self._check_idle, name=name, timeout=timeout + 20)
        try:
            pool.open(wait=True, timeout=timeout)
        except PoolTimeout:
            pool.close()
            with self._translate("open"), self.database.connect(**options):
                pass  # the server's own reason, when it gives one
            raise StoreError(f"{self.name}: open failed: no connection of the pool came in "
                             f"{timeout:g} s") from None
        return pool

    # --- connections ----------------------------------------------------------------------------

    def _translate(self, doing: str) -> contextlib.AbstractContextManager[None]:
        return self.database.translate(doing)

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

    def _query(self, doing: str, sql: str,
               params: Sequence[Any] = ()) -> tuple[list[str], list[Any]]:
        if self._opening is not None:
            cursor = self._opening.execute(sql, list(params) or None)
            return [d.name for d in cursor.description or ()], cursor.fetchall()
        with self._connection(doing) as connection:
            cursor = connection.execute(sql, list(params) or None)
            return [d.name for d in cursor.description or ()], cursor.fetchall()

    # --- the layout -----------------------------------------------------------------------------

    def _build(self, version: int) -> None:
        """Create the layout, or bring it to the current version: one transaction, under a lock,
        with the version read again inside it (another process may have just done it)."""
        connection = self._opening
        assert connection is not None
        with connection.transaction():
            connection.execute(sql.SCHEMA_LOCK)
            tables = [name for (name,) in self._fetch("open", self.dialect.tables)]
            version = self._layout(tables) if tables else 0
            if version == POSTGRES_STORE_VERSION:
                return
            for step in sql.MIGRATIONS[version:]:
                for statement in step:
                    connection.execute(statement)
            connection.execute(
                f"INSERT INTO {sql.META} (key, value) VALUES ('store_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [str(POSTGRES_STORE_VERSION)])
            if not version:  # a new store: its read model, empty, is today's
                connection.execute(
                    f"INSERT INTO {sql.META} (key, value) VALUES ('read_model_version', %s)",
                    [str(read_model.READ_MODEL_VERSION)])

    # --- appending ------------------------------------------------------------------------------

    def _insert(self, batch: list[Envelope], bodies: list[str]) -> None:
        # The round's own shape first (one turn, seqs without gaps), then, on the server, that it
        # continues the stored tail: a mismatch is said against the tail actually stored.
        if self._closed.is_set():
            raise StoreError(f"{self.name}: the store is closed")
        turn_id = batch[0].turn_id if batch else ""
        try:
            check_continuation(batch, batch[0].seq - 1 if batch else 0)
        except ConcurrencyError:
            check_continuation(batch, self.last_seq(turn_id))
            raise
        prepared = self._rows.prepare(batch, self._prefix)
        try:
            self._insert_round(batch, bodies, self._statement(batch, bodies, prepared))
        except BaseException:
            self._rows.forget(turn_id)
            raise
        self._rows.commit(prepared)

    def _statement(self, batch: list[Envelope], bodies: list[str], prepared: Prepared) -> Round:
        """The round's one statement and its parameters: the events, and the read-model rows
        they change (each table a column of arrays)."""
        turn_id = batch[0].turn_id
        params: list[Any] = [turn_id, [e.seq for e in batch], [e.kind for e in batch],
                             [e.version for e in batch], [e.at for e in batch], bodies,
                             turn_id, batch[0].seq - 1]
        fence = self.fence_of(turn_id) if self.fence_of is not None else None
        if fence is not None:
            params += [fence.name, fence.epoch, fence.holder]
        tables = []
        for table in read_tables.TABLES:
            rows = getattr(prepared.changes, table.field)
            if rows:
                tables.append(table.name)
                params.append(_json.encode(rows).decode())
        return Round(sql.insert(tuple(tables), fenced=fence is not None), params, len(batch),
                     fence)

    def _insert_round(self, batch: list[Envelope], bodies: list[str], round_: Round) -> None:
        turn_id = batch[0].turn_id
        what = f"turn {turn_id} seq {batch[0].seq}-{batch[-1].seq}"
        patience = Patience(self.append_patience)
        attempt = self._attempt(round_)
        lost = not attempt.answered
        if lost:
            logger.warning("%s: the connection was lost while %s was written; reading it back "
                           "and trying again on a new connection for up to %g s (%s)", self.name,
                           what, patience.seconds, attempt.detail)
            attempt = self._answered(batch, bodies, round_, attempt, patience, what)
            # The server was away: the pools' other connections may be broken.
            for pool in filter(None, (self._pool, self._writers)):
                with contextlib.suppress(Exception):
                    pool.check()
        if attempt.outcome == "stored":
            return
        if attempt.outcome == "cancelled":
            reason = attempt.detail
            if "statement timeout" in reason:
                reason += f"; an insert may take {self.insert_timeout:g} s"
            raise StoreError(f"{self.name}: append failed: the server cancelled the insert of "
                             f"{what} ({reason}); nothing of it was stored")
        # Refused or raced.
        if lost:  # a round sent before the loss may have landed after all
            stored = self._settle(batch, bodies, patience)
            if stored:
                return  # it is ours
            if stored is None:
                raise StoreError(self._unsettled(what, "it could not be read back in time"))
        if round_.fence is not None:  # a lease moved on says more than the seqs it took
            self._fenced(round_.fence, what)
        if attempt.outcome == "raced":
            self._raced(batch)
        check_continuation(batch, self.last_seq(turn_id))
        raise ConcurrencyError(f"{self.name}: turn {turn_id}: seq {batch[0].seq} does not "
                               "continue the stored tail")

    def _answered(self, batch: list[Envelope], bodies: list[str], round_: Round,
                  attempt: Attempt, patience: Patience, what: str) -> Attempt:
        """The first answered try after a lost connection: a round that may be stored is read
        back first (stored as sent: answered `stored`), and tried again on a new connection
        when it is absent, within `patience`."""
        while not attempt.answered:
            if attempt.outcome == "lost":
                stored = self._settle(batch, bodies, patience, attempt.backend)
                if stored:
                    return Attempt("stored", attempt.backend)
                if stored is None:
                    raise StoreError(self._unsettled(what, attempt.detail)) from None
            if not patience.retry():
                raise StoreError(
                    f"{self.name}: append failed: the connection was lost before {what} was "
                    f"committed; nothing of it was stored ({attempt.detail})") from None
            attempt = self._attempt(round_, patience)
        return attempt

    def _fenced(self, fence: Fence, what: str) -> None:
        """A fenced round was not stored: `LeaseLost` when its lease has moved on — whatever
        else the new holder did meanwhile, such as storing those seqs itself."""
        rows = self._fetch("read the lease", f"SELECT holder, epoch FROM {sql.LEASES} "
                           "WHERE name = %s", [fence.name])
        holder, epoch = (str(rows[0][0]), int(rows[0][1])) if rows else ("nobody", 0)
        if (holder, epoch) == (fence.holder, fence.epoch):
            return  # still its own: the seqs were another writer's
        raise LeaseLost(f"{self.name}: {what} was not stored: its lease {fence.name} is at "
                        f"epoch {epoch}, held by {holder or 'nobody'}; {fence.holder} wrote "
                        f"under epoch {fence.epoch}")

    def _unsettled(self, what: str, detail: str) -> str:
        return (f"{self.name}: append failed: the connection was lost while {what} was written, "
                f"which is stored whole or not at all: read the turn to know ({detail})")

    def _attempt(self, round_: Round, patience: Patience | None = None) -> Attempt:
        """One try at the round's transaction, on a pooled connection or (after a loss) on a
        new one of its own."""
        try:
            if patience is None:
                assert self._writers is not None  # a read-only store appends nothing
                with self._writers.connection(timeout=POOL_WAIT) as connection:
                    attempt = self._transaction(connection, round_)
                    with self._used_lock:
                        self._last_used[connection] = time.monotonic()
                    return attempt
            options = {**self.database.writing(statement_timeout=self.insert_timeout),
                       "connect_timeout": connect_timeout(patience)}
            with self.database.connect(**options) as connection:
                return self._transaction(connection, round_)
        except PoolTimeout as error:  # the server is away: no connection came back in time
            lost = psycopg.OperationalError(f"no connection ({error})")
            return Attempt("unsent", detail=self._detail(lost))
        except psycopg.OperationalError as error:
            return Attempt("unsent", detail=self._detail(error))

    def _transaction(self, connection: psycopg.Connection[Any], round_: Round) -> Attempt:
        """The round's transaction on `connection`: what became of it (`Outcome`)."""
        if self._closed.is_set():
            raise StoreError(f"{self.name}: the store is closed")
        # From the first byte sent, a lost connection may have left the round committed, and
        # only reading it back can say.
        backend = connection.info.backend_pid
        lost = False
        try:
            inserted = self._write(connection, round_)
            return Attempt("stored" if inserted == round_.events else "refused", backend)
        except psycopg.errors.UniqueViolation:
            return Attempt("raced", backend)
        except psycopg.errors.QueryCanceled as error:  # the server rolled the statement back
            return Attempt("cancelled", backend,
                           self.database.scrub(error.diag.message_primary or one_line(error)))
        except psycopg.OperationalError as error:
            lost = True
            connection.close()  # the pool replaces a closed connection instead of lending it
            return Attempt("lost", backend, self._detail(error))
        except psycopg.Error as error:
            raise StoreError(f"{self.name}: append failed: "
                             f"{self.database.scrub(one_line(error))}") from None
        finally:
            if connection.info.transaction_status in _OPEN and not lost:
                connection.execute("ROLLBACK")

    def _detail(self, error: BaseException) -> str:
        """A connection failure in one line, without secrets."""
        return self.database.scrub(one_line(error))

    def _settle(self, batch: list[Envelope], bodies: list[str], patience: Patience,
                backend: int = 0) -> bool | None:
        """Whether a round whose commit went unanswered is stored: read back on a new
        connection (within `patience`), once `backend` — the server process it was sent on —
        no longer runs a statement. True: every event of it is stored as sent; False: none
        is; None: the server could not be asked in time. Other events at its seqs are another
        writer's: `ConcurrencyError`."""
        turn_id, first, last = batch[0].turn_id, batch[0].seq, batch[-1].seq
        while True:
            try:
                with self.database.connect(
                        connect_timeout=connect_timeout(patience)) as connection:
                    while backend and connection.execute(sql.RUNNING, [backend]).fetchone():
                        if not patience.left():
                            return None
                        time.sleep(0.02)
                    rows = connection.execute(sql.SETTLE, [turn_id, first, last]).fetchall()
                break
            except psycopg.OperationalError:
                if not patience.retry():
                    return None
        stored = settled(first, bodies, rows)
        if stored is not None:
            return stored
        check_continuation(batch, self.last_seq(turn_id))  # raises, naming the stored tail
        raise ConcurrencyError(f"{self.name}: turn {turn_id}: seq {first} was written by another "
                               "writer")

    def _write(self, connection: psycopg.Connection[Any], round_: Round) -> int:
        """The round's insert: one statement, so one transaction of its own, in one round trip.
        It says how many events it stored: all or none."""
        row = connection.execute(round_.statement, round_.params).fetchone()
        return int(row[0]) if row else 0

    def _prefix(self, turn_id: str, last_seq: int) -> list[Envelope]:
        """The turn's stored events up to `last_seq`: the fold an append continues, when the
        cache of running turns does not hold it."""
        return turn_envelopes(turn_id, self._fetch("append", sql.PREFIX, [turn_id, last_seq]))

    def _replace_rows(self) -> int:
        """On the opening connection (or a new one), without the writers' statement timeout: a
        rebuild reads every turn. Appends wait on the table's lock meanwhile."""
        with contextlib.ExitStack() as stack:
            connection = self._opening or stack.enter_context(self.database.connect())
            with self._translate("rebuild the read model"), connection.transaction():
                connection.execute(f"LOCK TABLE {sql.EVENTS} IN SHARE MODE")
                turns = self._rebuild_in(connection.execute,
                                         lambda statement, values: connection.cursor()
                                         .executemany(statement, values))
        self._rows.clear()
        return turns

    def _raced(self, batch: list[Envelope]) -> None:
        """Another writer committed the same seqs between our tail check and our insert."""
        turn_id = batch[0].turn_id
        check_continuation(batch, self.last_seq(turn_id))  # raises, naming the new tail
        raise ConcurrencyError(f"{self.name}: turn {turn_id}: seq {batch[0].seq} was written by "
                               "another writer at the same time")

    # --- the ordered record ---------------------------------------------------------------------

    def follow_placed(self, after: Position | None = None,
                      limit: int = 1000) -> list[tuple[Position, Envelope]]:
        rows, upcast = self._follow_rows(after, limit)
        return [
            (Position(tx=int(tx), position=int(position)),
             upcast[(turn_id, seq)] if version != SCHEMA_VERSION
             else Envelope(turn_id=turn_id, seq=seq, at=at, event=decode_current(body)))
            for tx, position, turn_id, seq, version, at, body in rows
        ]

    def follow_encoded(self, after: Position | None = None,
                       limit: int = 1000) -> list[tuple[Position, str, int, bytes]]:
        """Built around the stored body without decoding it."""
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

    def identity(self) -> str:
        """An id drawn when it is first asked for and kept in the store's meta table (a store
        opened read-only reads it, and cannot draw it)."""
        with self._connection("identify") as connection:
            row = connection.execute(sql.IDENTITY).fetchone()
            if row is None:
                connection.execute(
                    f"INSERT INTO {sql.META} (key, value) VALUES ('store_id', %s) "
                    "ON CONFLICT (key) DO NOTHING", [uuid.uuid4().hex])
                row = connection.execute(sql.IDENTITY).fetchone()
        assert row is not None
        return str(row[0])

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._pool.close()
            if self._writers is not None:
                self._writers.close()
