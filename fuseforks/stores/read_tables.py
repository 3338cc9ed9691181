"""The read model as tables: what an SQL store keeps beside its events, and how it reads them.

Six tables, each holding one kind of row of the read model's fold
(`fuseforks.projections.read_model`) with exactly that row's fields as its columns:
`turn_summaries` (`TurnSummary`), `request_images` (`RequestImage`), `request_outcomes`
(`RequestOutcome`), `client_deliveries` (`ClientDeliveryRow`), `image_origins` (`OriginRow`) and
`image_index` (`DigestTurn`: the turns that name an image, where an audit by digest starts). The
columns are read off the row types, so a field added to a row is a column here without a second
list to keep; each table's key is the row's place. The view `image_deliveries` joins a request's
images, its outcome and its turn's end into the audit's `DeliveryRow`, column for column: it
joins stored rows and derives nothing. Nothing here derives a row: the fold did; SQL only
stores, joins and selects.

Both SQL stores use these statements, in their own `Dialect` (a parameter mark, the column
types, what follows a table's definition).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from fuseforks.projections.audit import AuditFilter, OriginRow
from fuseforks.projections.deliveries import (
    ClientDeliveryRow,
    DeliveryRow,
    RequestImage,
    RequestOutcome,
)
from fuseforks.projections.read_model import DigestTurn, ReadRows
from fuseforks.projections.summary import SummaryFilter, TurnSummary
from fuseforks.stores.dialect import Dialect


class TableSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    row: type[msgspec.Struct]
    field: str
    """The `ReadRows` field that holds its rows."""
    key: tuple[str, ...]
    order: tuple[str, ...]
    columns: tuple[str, ...] = ()
    """The row's fields, in order (read off the type once, at import)."""
    kinds: dict[str, type] = {}


def _spec(**given: Any) -> TableSpec:
    fields = msgspec.structs.fields(given["row"])
    return TableSpec(**given, columns=tuple(f.name for f in fields),
                     kinds={f.name: f.type for f in fields})


TABLES = (
    _spec(name="turn_summaries", row=TurnSummary, field="summaries", key=("turn_id",),
          order=("started", "turn_id")),
    _spec(name="request_images", row=RequestImage, field="request_images",
          key=("turn_id", "request_seq", "image"), order=("at", "turn_id", "request_seq", "image")),
    _spec(name="request_outcomes", row=RequestOutcome, field="request_outcomes",
          key=("turn_id", "request_seq"), order=("turn_id", "request_seq")),
    _spec(name="client_deliveries", row=ClientDeliveryRow, field="client_deliveries",
          key=("session_id", "seq", "image"), order=("at", "session_id", "seq", "image")),
    _spec(name="image_origins", row=OriginRow, field="origins", key=("turn_id", "seq", "image"),
          order=("at", "turn_id", "seq", "image")),
    _spec(name="image_index", row=DigestTurn, field="image_index", key=("digest", "turn_id"),
          order=("digest", "turn_id")),
)
BY_NAME = {table.name: table for table in TABLES}
DELIVERIES = _spec(name="image_deliveries", row=DeliveryRow, field="", key=(),
                   order=("at", "turn_id", "request_seq", "image"))
"""The view of deliveries (what the audit lists)."""
_FROM_OUTCOME = ("outcome", "stripped")


def _sql_type(kind: type, dialect: Dialect) -> str:
    if kind is bool:
        return dialect.boolean
    if kind is int:
        return dialect.integer
    return dialect.text


def create(dialect: Dialect) -> list[str]:
    """Every table, and the view of deliveries."""
    statements = []
    for table in TABLES:
        kinds = table.kinds
        columns = ", ".join(f"{name} {_sql_type(kinds[name], dialect)} NOT NULL"
                            for name in table.columns)
        statements.append(f"CREATE TABLE IF NOT EXISTS {table.name} ({columns}, "
                          f"PRIMARY KEY ({', '.join(table.key)})){dialect.table_options}")
    # Each part by its key, one lookup per row: whatever a planner knows of the tables (a store
    # its statistics have not reached yet), an audit by digest reads only the rows it shows.
    outcome = ("(SELECT o.{c} FROM request_outcomes o WHERE o.turn_id = r.turn_id "
               "AND o.request_seq = r.request_seq) AS {c}")
    chosen = [outcome.format(c=c) if c in _FROM_OUTCOME
              else "(SELECT s.stop FROM turn_summaries s WHERE s.turn_id = r.turn_id) AS turn_stop"
              if c == "turn_stop" else f"r.{c}" for c in DELIVERIES.columns]
    statements.append(f"CREATE VIEW {DELIVERIES.name} AS SELECT {', '.join(chosen)} "
                      "FROM request_images r")
    return statements


DROP = [f"DROP VIEW IF EXISTS {DELIVERIES.name}",
        *(f"DROP TABLE IF EXISTS {table.name}" for table in TABLES)]
"""The read model gone (before a layout change builds it again)."""


def upsert(table: TableSpec, dialect: Dialect) -> str:
    """One row, written whole over the row of the same key (a summary and an outcome change as
    their turn goes on); a row of nothing but its key is written once."""
    columns = table.columns
    others = [c for c in columns if c not in table.key]
    conflict = (f"DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in others)}" if others
                else "DO NOTHING")
    return (f"INSERT INTO {table.name} ({', '.join(columns)}) "
            f"VALUES ({dialect.marks(len(columns))}) "
            f"ON CONFLICT ({', '.join(table.key)}) {conflict}")


def values(table: TableSpec, rows: ReadRows) -> list[tuple[Any, ...]]:
    """The parameters of `upsert` for each of the table's rows in `rows`."""
    astuple = msgspec.structs.astuple  # the columns are the row type's fields, in order
    return [astuple(row) for row in getattr(rows, table.field)]


def select(table: TableSpec, where: str = "") -> str:
    return (f"SELECT {', '.join(table.columns)} FROM {table.name}"
            f"{' WHERE ' + where if where else ''} ORDER BY {', '.join(table.order)}")


def decode(table: TableSpec, names: Sequence[str], rows: Sequence[Any]) -> list[Any]:
    """Stored rows as the row type (SQLite keeps a boolean as 0 or 1)."""
    flags = [i for i, name in enumerate(names) if table.kinds.get(name) is bool]
    records = []
    for row in rows:
        record = dict(zip(names, row, strict=True))
        for index in flags:
            record[names[index]] = bool(row[index])
        records.append(record)
    return msgspec.convert(records, list[table.row])  # type: ignore[name-defined]


# --- the audit's questions --------------------------------------------------------------------------

AT_KEY_FORMAT = "%Y-%m-%dT%H:%M:%fZ"
"""`strftime` format of `fuseforks.projections.audit.at_key`."""


def _where(where: AuditFilter, dialect: Dialect, turn: str,
           columns: Sequence[tuple[str, str | None]]) -> tuple[str, list[str]]:
    m = dialect.mark
    clauses, params = [], []
    if where.digest is not None:  # the turns that name it first: a lookup however large
        naming = dialect.turns_naming.format(column=turn, mark=m)
        clauses.append(f"digest = {m} AND {naming}")
        params += [where.digest, where.digest]
    for column, value in columns:
        if value is not None:
            clauses.append(f"{column} = {m}")
            params.append(value)
    if where.since is not None and dialect.since_in_sql:
        clauses.append(f"strftime('{AT_KEY_FORMAT}', at) >= {m}")
        params.append(where.since)
    return " AND ".join(clauses), params


def deliveries_where(where: AuditFilter, dialect: Dialect) -> tuple[str, list[str]]:
    """The provider deliveries `where` asks for, by the rules of `AuditFilter.keeps`: times
    compare as UTC instants to the millisecond (`strftime` reads offsets), not as strings."""
    clause, params = _where(where, dialect, "turn_id", (
        ("wire", where.wire), ("model", where.model), ("tool", where.tool)))
    return select(DELIVERIES, clause), params


def client_deliveries_where(where: AuditFilter, dialect: Dialect) -> tuple[str, list[str]]:
    """The client deliveries `where` asks for (`AuditFilter.keeps_client`)."""
    clause, params = _where(where, dialect, "session_id", (
        ("client", where.client), ("tool", where.tool)))
    return select(BY_NAME["client_deliveries"], clause), params


def origins_of(digest: str, dialect: Dialect) -> tuple[str, list[str]]:
    clause, params = _where(AuditFilter(digest=digest), dialect, "turn_id", ())
    return select(BY_NAME["image_origins"], clause), params


def digests_with_prefix(prefix: str, dialect: Dialect) -> tuple[str, list[str]]:
    """Every digest the read model names that starts with `prefix` (lowercase hex): a range of
    the image index's key, so it is a lookup however large the store."""
    m = dialect.mark
    return (f"SELECT DISTINCT digest FROM image_index WHERE digest >= {m} AND digest < {m} "
            "ORDER BY digest", [prefix, prefix + "g"])


def summaries_where(where: SummaryFilter, dialect: Dialect) -> tuple[str, list[str]]:
    """The condition on `turn_summaries` that `SummaryFilter.keeps` states. Times compare as UTC
    instants where the store reads them so (SQLite's `strftime`); elsewhere as the clock writes
    every start, `YYYY-MM-DDTHH:MM:SS.mmmZ`, which is a `since_key`'s own form."""
    m = dialect.mark
    clauses, params = [], []
    for column, value in (("wire", where.wire), ("model", where.model), ("stop", where.stop)):
        if value is not None:
            clauses.append(f"{column} = {m}")
            params.append(value)
    if where.conversation is not None:
        clauses.append(f"substr(conversation, 1, {len(where.conversation)}) = {m}")
        params.append(where.conversation)
    started = f"strftime('{AT_KEY_FORMAT}', started)" if dialect.since_in_sql else "started"
    for op, value in ((">=", where.since), ("<", where.until)):
        if value is not None:
            clauses.append(f"{started} {op} {m}")
            params.append(value)
    return " AND ".join(clauses), params


def summaries_page(where: SummaryFilter, dialect: Dialect, *, newest_first: bool, offset: int,
                   limit: int | None) -> tuple[str, list[Any]]:
    table = BY_NAME["turn_summaries"]
    clause, params = summaries_where(where, dialect)
    order = " DESC".join(("started", ", turn_id", "")) if newest_first else "started, turn_id"
    page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else (
        f" LIMIT -1 OFFSET {int(offset)}" if offset and dialect.mark == "?" else
        f" OFFSET {int(offset)}" if offset else "")
    return (f"SELECT {', '.join(table.columns)} FROM {table.name}"
            f"{' WHERE ' + clause if clause else ''} ORDER BY {order}{page}", params)


def summaries_count(where: SummaryFilter, dialect: Dialect) -> tuple[str, list[Any]]:
    clause, params = summaries_where(where, dialect)
    return f"SELECT count(*) FROM turn_summaries{' WHERE ' + clause if clause else ''}", params
