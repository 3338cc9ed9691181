"""What both SQL stores do alike, written once: opening (an empty database, someone else's, a
newer fuseforks's, an older layout), the pixel-guarded append, reading with upcasting, listing,
and the audit in SQL.

Each SQL store keeps only its connection and its dialect: `SqliteStore` (one file, one
connection, WAL) and `PostgresStore` (a pool, commit-ordered following). A store says what it
runs in its `Dialect` and gives the base three things: `_query` (one reading statement),
`_insert` (one batch in one transaction, continuing the turn's stored tail) and `_build` (create
the layout, or bring an older one to the current version).

Each backend counts its own layout versions (`SQLITE_STORE_VERSION`, `POSTGRES_STORE_VERSION`):
the tables, indexes and views of that backend, stamped as `store_version` in `fuseforks_meta`.
It is not the events' schema version, which every event carries itself (`SCHEMA_VERSION`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from fuseforks.core.errors import CorruptStoreError, NewerSchemaError, StoreError
from fuseforks.events.codec import SCHEMA_VERSION, Envelope, stored_kinds
from fuseforks.projections import read_model
from fuseforks.projections.audit import AuditFilter, AuditRows, OriginRow
from fuseforks.projections.deliveries import ClientDeliveryRow, DeliveryRow
from fuseforks.projections.read_model import read_rows
from fuseforks.projections.summary import EVERY_TURN, SummaryFilter, TurnSummary
from fuseforks.stores import read_tables
from fuseforks.stores.dialect import Dialect
from fuseforks.stores.rows import envelopes, guarded_bodies, turn_envelopes
from fuseforks.stores.store import EventStore, TurnInfo

META = "fuseforks_meta"
EVENTS = "events"
_LISTED = 10
"""Tables a refusal names at most."""


class EmptyDatabase(CorruptStoreError):
    """A database without a single table: no store yet."""


class SqlStore(EventStore, ABC):
    """An event store in an SQL database. `read_only`: never write anything; `append` is
    refused, and an older layout is read as it is (its audit folded from the events when its
    views cannot answer)."""

    dialect: ClassVar[Dialect]
    engine: ClassVar[str]
    """The database's name in messages: SQLite, PostgreSQL."""
    a_database: ClassVar[str]
    """The same with its article: an SQLite database, a PostgreSQL database."""
    newest: ClassVar[int]
    """This backend's current layout version."""

    name: str
    read_only: bool
    layout_version: int
    """The table layout as found; below `newest` only for a store opened read-only."""

    # --- what each SQL store gives: its connection ----------------------------------------------

    @abstractmethod
    def _query(self, doing: str, sql: str,
               params: Sequence[Any] = ()) -> tuple[list[str], list[Any]]:
        """Run one reading statement: its column names and rows, errors as the project's own."""

    @abstractmethod
    def _insert(self, batch: list[Envelope], bodies: list[str]) -> None:
        """Store the batch (its events' bodies beside it) in one transaction, if it continues
        the turn's stored tail (`ConcurrencyError` if not, storing nothing)."""

    @abstractmethod
    def _build(self, version: int) -> None:
        """Create the layout (`version` 0) or bring it from `version` to `newest`."""

    # --- opening --------------------------------------------------------------------------------

    @classmethod
    def inspect(cls, target: Any) -> int:
        """The layout version of the store at `target`, read without writing anything: 0 when
        there is no store yet (a database without tables), where opening for writing creates
        one. Raises for a database fuseforks must not write to, or cannot reach."""
        try:
            with cls(target, read_only=True) as store:  # type: ignore[call-arg]
                return store.layout_version
        except EmptyDatabase:
            return 0

    def _open(self) -> None:
        """Check what the database holds, then create or upgrade the layout (writing) or take
        it as it is (read-only)."""
        self.layout_version = self.newest
        tables = [name for (name,) in self._fetch("open", self.dialect.tables)]
        if not tables:
            if self.read_only:
                raise EmptyDatabase(f"{self.name}: an empty {self.engine} database, not a "
                                    "fuseforks store; nothing was changed")
            self._build(0)
        else:
            version = self._layout(tables)
            if version < self.newest:
                if self.read_only:
                    self.layout_version = version
                    return
                self._build(version)
        self._read_rows_version()
        if not self.read_only and self.rows_version != read_model.READ_MODEL_VERSION:
            self.rebuild_rows()

    @abstractmethod
    def _replace_rows(self) -> int:
        """In one transaction, against concurrent writers: every row of the read model's tables
        replaced by the fold of every stored turn (`_rebuild_in`), and `READ_MODEL_VERSION`
        stamped as the version they were written by. Returns the turns folded."""

    def rebuild_rows(self) -> int:
        """Build the read model again from the stored events (its fold changed, or someone asked
        for it: `fuseforks rebuild`); returns the turns folded."""
        if self.read_only:
            raise StoreError(f"{self.name}: opened read-only; nothing was changed")
        turns = self._replace_rows()
        self.rows_version = read_model.READ_MODEL_VERSION
        return turns

    def _rebuild_in(self, execute: Callable[[str, Sequence[Any]], Any],
                    executemany: Callable[[str, list[Any]], Any]) -> int:
        """The rebuild on one connection, in the transaction the store opened for it: every
        stored turn folded, one turn at a time, the tables' rows replaced, the version stamped.
        Returns the turns folded."""
        m = self.dialect.mark
        turn_ids = [turn for (turn,) in execute(f"SELECT DISTINCT turn_id FROM {EVENTS}",
                                                []).fetchall()]
        rows = read_rows(e for turn_id in turn_ids for e in turn_envelopes(
            turn_id, execute(self.dialect.read, [turn_id, 0]).fetchall()))
        for table in read_tables.TABLES:
            execute(f"DELETE FROM {table.name}", [])
            values = read_tables.values(table, rows)
            if values:
                executemany(read_tables.upsert(table, self.dialect), values)
        execute(f"INSERT INTO {META} (key, value) VALUES ('read_model_version', {m}) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [str(read_model.READ_MODEL_VERSION)])
        return len(turn_ids)

    def _layout(self, tables: Sequence[str]) -> int:
        """The layout version of a database that has tables, or a one-line refusal: someone
        else's database, a store from a newer fuseforks, an incomplete store."""
        if META not in tables:
            shown = ", ".join(repr(t) for t in tables[:_LISTED])
            more = f" and {len(tables) - _LISTED} more" if len(tables) > _LISTED else ""
            raise CorruptStoreError(
                f"{self.name}: {self.a_database}, but not a fuseforks store (it has tables "
                f"[{shown}]{more} and no {META}); nothing was changed")
        rows = self._fetch("open", self.dialect.version)
        version = int(rows[0][0]) if rows else 0
        if version > self.newest:
            raise NewerSchemaError(
                f"{self.name}: store version {version} was written by a newer fuseforks "
                f"(this one reads up to {self.newest}); nothing was changed")
        if version < 1 or EVENTS not in tables:
            raise CorruptStoreError(
                f"{self.name}: incomplete fuseforks store (no events table); nothing was changed")
        return version

    def _fetch(self, doing: str, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self._query(doing, sql, params)[1]

    # --- the turn log and the record ------------------------------------------------------------

    def append(self, envelopes: Sequence[Envelope]) -> None:
        if self.read_only:
            raise StoreError(f"{self.name}: opened read-only; nothing was changed")
        self._insert(list(envelopes), guarded_bodies(self.name, envelopes))

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        rows = self._fetch("read", self.dialect.read, [turn_id, after])
        if after and any(version != SCHEMA_VERSION for _, version, _, _ in rows):
            # Older events are upcast with their turn's context, which starts at seq 1.
            return [e for e in self.read(turn_id) if e.seq > after]
        return turn_envelopes(turn_id, rows)

    def last_seq(self, turn_id: str) -> int:
        rows = self._fetch("read", self.dialect.tail, [turn_id])
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    def turns(self) -> list[TurnInfo]:
        rows = self._fetch("list turns", self.dialect.turns)
        return [TurnInfo(turn_id=t, events=n, first_at=a, last_at=b) for t, n, a, b in rows]

    def conversation(self, conversation_id: str) -> list[Envelope]:
        """The `TurnStarted` and `TurnEnded` of every turn of a conversation (by turn, in seq),
        found through an index of turns by conversation."""
        return envelopes(self._fetch("read", self.dialect.conversation, [conversation_id]))

    def conversation_size(self, conversation_id: str) -> int:
        """Counted in the index of turns by conversation, without reading a turn."""
        return int(self._fetch("read", self.dialect.conversation_size, [conversation_id])[0][0])

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        """Every stored event of these kinds, oldest first, under their older names too: the
        kinds read across turns are found through an index (PostgreSQL indexes every kind,
        SQLite only those, one small index each)."""
        if not kinds:
            return []
        sql, params = self._of_kinds_query(stored_kinds(kinds))
        wanted = set(kinds)  # an older name asked for is no kind an event is read as
        return [e for e in envelopes(self._fetch("read", sql, params)) if e.kind in wanted]

    def _of_kinds_query(self, stored: Sequence[str]) -> tuple[str, list[str]]:
        """The statement reading the events stored under these kind names, and its parameters."""
        return self.dialect.of_kinds.format(marks=self.dialect.marks(len(stored))), list(stored)

    # --- the read model (tables written with the events; see fuseforks.stores.read_tables) -----

    rows_version: int = 0
    """The version of the fold the read model's rows were written by (`READ_MODEL_VERSION`)."""

    @property
    def _rows_current(self) -> bool:
        """Whether the read model's tables answer: the newest layout, rows of today's fold. A
        store opened read-only with older rows is answered by folding its events instead."""
        return (self.layout_version >= self.newest
                and self.rows_version == read_model.READ_MODEL_VERSION)

    def _read_rows_version(self) -> None:
        rows = (self._fetch("open", self.dialect.rows_version)
                if self.layout_version >= self.newest else [])
        self.rows_version = int(rows[0][0]) if rows else 0

    def summaries(self, where: SummaryFilter = EVERY_TURN, *, newest_first: bool = False,
                  offset: int = 0, limit: int | None = None) -> list[TurnSummary]:
        """A page of the summaries in SQL: a store of many turns lists one page in the time one
        page takes."""
        if not self._rows_current:
            return super().summaries(where, newest_first=newest_first, offset=offset,
                                     limit=limit)
        sql, params = read_tables.summaries_page(where, self.dialect, newest_first=newest_first,
                                                 offset=offset, limit=limit)
        return self._table(read_tables.BY_NAME["turn_summaries"], sql, params)

    def count_summaries(self, where: SummaryFilter = EVERY_TURN) -> int:
        if not self._rows_current:
            return super().count_summaries(where)
        sql, params = read_tables.summaries_count(where, self.dialect)
        return int(self._fetch("list turns", sql, params)[0][0])

    def audit(self, where: AuditFilter) -> AuditRows:
        if not self._rows_current:
            return super().audit(where)
        origins = self.image_origins(where.digest) if where.digest is not None else []
        deliveries = [] if where.client is not None else self._deliveries(where)
        clients: list[ClientDeliveryRow] = []
        if where.wire is None and where.model is None:
            sql, params = read_tables.client_deliveries_where(where, self.dialect)
            clients = [row for row in self._table(read_tables.BY_NAME["client_deliveries"],
                                                  sql, params) if where.keeps_client(row)]
        return AuditRows(origins=origins, deliveries=deliveries, client_deliveries=clients)

    def image_origins(self, digest: str) -> list[OriginRow]:
        if not self._rows_current:
            return super().image_origins(digest)
        sql, params = read_tables.origins_of(digest, self.dialect)
        return self._table(read_tables.BY_NAME["image_origins"], sql, params)

    def image_deliveries(self, *, digest: str | None = None, wire: str | None = None,
                         model: str | None = None, tool: str | None = None,
                         since: str | None = None) -> list[DeliveryRow]:
        where = AuditFilter(digest=digest, wire=wire, model=model, tool=tool, since=since)
        if not self._rows_current:
            return super().audit(where).deliveries
        return self._deliveries(where)

    def _deliveries(self, where: AuditFilter) -> list[DeliveryRow]:
        sql, params = read_tables.deliveries_where(where, self.dialect)
        found: list[DeliveryRow] = self._table(read_tables.DELIVERIES, sql, params)
        if (where.since is None or self.dialect.since_in_sql) and where.until is None \
                and where.outcome is None:
            return found
        return [row for row in found if where.keeps(row)]  # `until` and `outcome` by its rule

    def digests(self, prefix: str) -> list[str]:
        if not self._rows_current:
            return super().digests(prefix)
        sql, params = read_tables.digests_with_prefix(prefix, self.dialect)
        return [digest for (digest,) in self._fetch("audit", sql, params)]

    def _table(self, table: read_tables.TableSpec, sql: str, params: list[str]) -> list[Any]:
        names, rows = self._query("audit", sql, params)
        return read_tables.decode(table, names, rows)
