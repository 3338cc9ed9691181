"""Audit in SQL: an image index kept by triggers, and views that read naturally in Datasette.

The events table stays the only truth. `image_index` is derived from it inside the same
transaction as each append (triggers), so "which requests carried digest D" is an index lookup
even on a store of many thousands of turns. The views `image_origins` and `image_deliveries`
give the same rows as `fuseforks.projections.audit`, for the `sqlite-utils` CLI and Datasette.

The schema here is SQLite's (PostgreSQL's, with the same columns and rows, is in
`fuseforks.stores.postgres_sql`); the queries below are both stores', in each one's `Dialect`.
"""

from __future__ import annotations

from fuseforks.projections.audit import AuditFilter, DeliveryRow, OriginRow
from fuseforks.stores.dialect import Dialect

SCHEMA = [
    # One row per (digest, role, turn): the turns to look in, and the first event there. A request
    # re-sends the turn's images every round, so a row per request would write one index page per
    # image per round; the audit reads the few matching turns' events instead.
    """CREATE TABLE IF NOT EXISTS image_index (
        digest TEXT NOT NULL, turn_id TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,
        PRIMARY KEY (digest, role, turn_id)) WITHOUT ROWID, STRICT""",
    """CREATE TRIGGER IF NOT EXISTS image_index_deliveries AFTER INSERT ON events
        WHEN NEW.kind = 'RequestSent' BEGIN
        INSERT OR IGNORE INTO image_index(digest, turn_id, seq, role)
        SELECT json_extract(value, '$.digest'), NEW.turn_id, NEW.seq, 'delivery'
        FROM json_each(NEW.body, '$.images');
    END""",
    """CREATE TRIGGER IF NOT EXISTS image_index_origins AFTER INSERT ON events
        WHEN NEW.kind = 'ImagesNormalized' BEGIN
        INSERT OR IGNORE INTO image_index(digest, turn_id, seq, role)
        SELECT json_extract(value, '$.digest'), NEW.turn_id, NEW.seq, 'origin'
        FROM json_each(NEW.body, '$.images');
    END""",
    """CREATE VIEW IF NOT EXISTS tool_calls AS
        SELECT turn_id, seq, json_extract(body, '$.call_id') AS call_id,
               json_extract(body, '$.name') AS tool,
               coalesce(json_extract(body, '$.server'), '') AS server
        FROM events WHERE kind = 'ToolCalled'""",
    """CREATE VIEW IF NOT EXISTS image_origins AS
        SELECT json_extract(i.value, '$.digest') AS digest, e.turn_id, e.seq, e.at,
               json_extract(e.body, '$.round') AS round,
               json_extract(e.body, '$.call_id') AS call_id,
               coalesce(c.tool, '') AS tool, coalesce(c.server, '') AS server,
               json_extract(i.value, '$.source_format') AS source_format,
               json_extract(i.value, '$.media_type') AS media_type,
               json_extract(i.value, '$.path') AS path,
               json_extract(i.value, '$.width') AS width,
               json_extract(i.value, '$.height') AS height,
               json_extract(i.value, '$.size') AS size
        FROM events e JOIN json_each(e.body, '$.images') i
        LEFT JOIN tool_calls c ON c.turn_id = e.turn_id
             AND c.call_id = json_extract(e.body, '$.call_id')
        WHERE e.kind = 'ImagesNormalized'""",
    """CREATE VIEW IF NOT EXISTS image_deliveries AS
        SELECT json_extract(i.value, '$.digest') AS digest, e.turn_id, e.seq AS request_seq, e.at,
               json_extract(e.body, '$.round') AS round,
               coalesce(json_extract(e.body, '$.purpose'), 'round') AS purpose,
               json_extract(e.body, '$.wire') AS wire,
               json_extract(e.body, '$.model') AS model,
               json_extract(e.body, '$.endpoint_host') AS endpoint_host,
               json_extract(i.value, '$.placement') AS placement,
               json_extract(i.value, '$.call_id') AS call_id,
               coalesce(c.tool, '') AS tool,
               CASE (SELECT n.kind FROM events n
                     WHERE n.turn_id = e.turn_id AND n.seq > e.seq
                       AND n.kind IN ('ResponseReceived', 'RequestRefused', 'WireRejected400',
                                      'RequestSent', 'TurnEnded')
                     ORDER BY n.seq LIMIT 1)
                   WHEN 'ResponseReceived' THEN 'received'
                   WHEN 'RequestRefused' THEN 'refused'
                   WHEN 'WireRejected400' THEN 'refused'  -- its name in event version 1
                   ELSE 'unanswered' END AS outcome,
               EXISTS (SELECT 1 FROM events s
                       WHERE s.turn_id = e.turn_id AND s.kind = 'ImagesStripped' AND s.seq > e.seq
                         AND s.seq < coalesce((SELECT min(r.seq) FROM events r
                                               WHERE r.turn_id = e.turn_id AND r.seq > e.seq
                                                 AND r.kind = 'RequestSent'), 1 << 62)
               ) AS stripped,
               coalesce((SELECT coalesce(json_extract(t.body, '$.stop'), 'answered')
                         FROM events t WHERE t.turn_id = e.turn_id AND t.kind = 'TurnEnded'),
                        'cut') AS turn_stop
        FROM events e JOIN json_each(e.body, '$.images') i
        LEFT JOIN tool_calls c ON c.turn_id = e.turn_id
             AND c.call_id = json_extract(i.value, '$.call_id')
        WHERE e.kind = 'RequestSent'""",
]

DERIVED = ("image_index_deliveries", "image_index_origins")
"""Triggers dropped with the index table when the store layout is upgraded (all derived data)."""

VIEWS = ("tool_calls", "image_origins", "image_deliveries")
"""Dropped and created again when the store layout is upgraded (views hold no data)."""

BACKFILL = """INSERT OR IGNORE INTO image_index(digest, turn_id, seq, role)
    SELECT json_extract(i.value, '$.digest'), e.turn_id, e.seq,
           CASE e.kind WHEN 'RequestSent' THEN 'delivery' ELSE 'origin' END
    FROM events e JOIN json_each(e.body, '$.images') i
    WHERE e.kind IN ('RequestSent', 'ImagesNormalized')"""

_ORIGIN_COLUMNS = ", ".join(OriginRow.__struct_fields__)
SQLITE_DELIVERY_COLUMNS = ", ".join(
    f"CAST({f} AS INTEGER) AS {f}" if f == "stripped" else f
    for f in DeliveryRow.__struct_fields__
)
"""SQLite's views hold `stripped` as 0/1: the query casts it (a store with booleans lists the
fields as they are)."""


def origins_by_digest(digest: str, dialect: Dialect) -> tuple[str, list[str]]:
    m = dialect.mark
    return (
        f"SELECT {_ORIGIN_COLUMNS} FROM {dialect.origins} WHERE digest = {m} AND turn_id IN "
        f"(SELECT turn_id FROM image_index WHERE digest = {m} AND role = 'origin') "
        f"ORDER BY at, turn_id, seq{dialect.tie}",
        [digest, digest],
    )


def deliveries_where(where: AuditFilter, dialect: Dialect) -> tuple[str, list[str]]:
    """The deliveries `where` asks for, by the rules of `AuditFilter.keeps`: times compare as
    UTC instants to the millisecond (`strftime` reads offsets), not as strings."""
    m = dialect.mark
    clauses, params = [], []
    if where.digest is not None:
        clauses.append(f"digest = {m} AND turn_id IN (SELECT turn_id FROM image_index "
                       f"WHERE digest = {m} AND role = 'delivery')")
        params += [where.digest, where.digest]
    for column, value in (("wire", where.wire), ("model", where.model), ("tool", where.tool)):
        if value is not None:
            clauses.append(f"{column} = {m}")
            params.append(value)
    if where.since is not None and dialect.since_in_sql:
        clauses.append(f"strftime('{AT_KEY_FORMAT}', at) >= {m}")
        params.append(where.since)
    condition = " WHERE " + " AND ".join(clauses) if clauses else ""
    return (
        f"SELECT {dialect.delivery_columns} FROM {dialect.deliveries}{condition} "
        f"ORDER BY at, turn_id, request_seq{dialect.tie}",
        params,
    )


AT_KEY_FORMAT = "%Y-%m-%dT%H:%M:%fZ"
"""`strftime` format of `fuseforks.projections.audit.at_key`."""


def digests_with_prefix(prefix: str, dialect: Dialect) -> tuple[str, list[str]]:
    """Every indexed digest that starts with `prefix` (lowercase hex): a range of the index's
    primary key, so it is a lookup however large the store."""
    m = dialect.mark
    return (
        f"SELECT DISTINCT digest FROM image_index WHERE digest >= {m} AND digest < {m} "
        "ORDER BY digest",
        [prefix, prefix + "g"],  # "g" sorts after every hex digit
    )
