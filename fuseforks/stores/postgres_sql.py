"""What the PostgreSQL store says in SQL, and its URLs — importable without psycopg.

The layout mirrors the SQLite store's (`fuseforks.stores.sqlite`, `fuseforks.stores.audit_sql`):
`events(turn_id, seq, kind, version, at, body)` keyed by `(turn_id, seq)`, a version table
`fuseforks_meta`, the image index kept inside each append's transaction, and the views
`tool_calls`, `image_origins` and `image_deliveries` with the same columns and the same rows.
Two columns are PostgreSQL's own: `tx` (the writing transaction's id) and `position` (a
sequence), which give readers that follow the store a global order (see `PostgresStore.follow`).

- The body is `text`, not `jsonb`: it keeps the bytes msgspec wrote, exactly, so an export from
  PostgreSQL equals one from SQLite byte for byte, and reading never re-serializes. The views
  and the index cast it to `jsonb` once per row.
- Text columns are `COLLATE "C"`: turn ids, times and digests sort by code point, as in SQLite,
  whatever the database's locale; `fuseforks turns` lists turns in the same order on both.
- A URL's password never appears in a message: `DatabaseUrl` prints itself redacted.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from fuseforks.projections.audit import DeliveryRow, OriginRow
from fuseforks.stores.dialect import Dialect
from fuseforks.stores.sql import EVENTS, META

SCHEMES = ("postgresql://", "postgres://")

POSTGRES_STORE_VERSION = 1
"""Version of the PostgreSQL table layout (its own count, not the SQLite store's
`SQLITE_STORE_VERSION`, and not the events', which carry their own version). 1: events, the
image index, the audit views, an index of turns by conversation."""


# --- URLs ----------------------------------------------------------------------------------------


def is_database_url(text: str) -> bool:
    """Whether `text` names a PostgreSQL database rather than a file."""
    return text.lower().startswith(SCHEMES)


def redact_url(url: str) -> str:
    """`url` with its password, from the user part or a `password=` parameter, shown as `***`;
    the rest exactly as written."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0],
              default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    if "@" in netloc:
        login, _, hosts = netloc.rpartition("@")
        user, colon, _password = login.partition(":")
        netloc = f"{user}:***@{hosts}" if colon else f"{user}@{hosts}"
    path, question, query = tail.partition("?")
    query = re.sub(r"(?i)(^|&)(password)=[^&#]*", r"\1\2=***", query)
    return f"{scheme}://{netloc}{path}{question}{query}"


def url_password(url: str) -> str:
    """The password `url` carries, if any (to scrub it from a driver's message, should one ever
    quote it)."""
    parts = urlsplit(url)
    found = re.search(r"(?i)(?:^|&)password=([^&]*)", parts.query)
    if found:
        return unquote(found.group(1))
    return unquote(parts.password or "")


class DatabaseUrl:
    """A PostgreSQL URL given on the command line: `str()` of it is redacted, `.url` is whole."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __str__(self) -> str:
        return redact_url(self.url)

    def __repr__(self) -> str:
        return f"DatabaseUrl({redact_url(self.url)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatabaseUrl) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)


# --- the layout ----------------------------------------------------------------------------------

MIGRATIONS: list[list[str]] = [
    # 0 -> 1: the store.
    [
        f"""CREATE TABLE {META} (
            key text COLLATE "C" PRIMARY KEY,
            value text NOT NULL)""",
        f"""CREATE TABLE {EVENTS} (
            turn_id text COLLATE "C" NOT NULL,
            seq integer NOT NULL,
            kind text COLLATE "C" NOT NULL,
            version integer NOT NULL,
            at text COLLATE "C" NOT NULL,
            body text COLLATE "C" NOT NULL,
            tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
            position bigserial NOT NULL,
            PRIMARY KEY (turn_id, seq))""",
        f"CREATE INDEX events_order ON {EVENTS} (tx, position)",
        f"CREATE INDEX events_kind ON {EVENTS} (kind)",
        # Finds a conversation's turns without reading every turn (the agent does it before
        # each turn).
        f"""CREATE INDEX events_by_conversation ON {EVENTS} ((body::jsonb ->> 'conversation_id'))
            WHERE kind = 'TurnStarted'""",
        # One row per (digest, role, turn): the turns to look in, and the first event there.
        """CREATE TABLE image_index (
            digest text COLLATE "C" NOT NULL,
            turn_id text COLLATE "C" NOT NULL,
            seq integer NOT NULL,
            role text COLLATE "C" NOT NULL,
            PRIMARY KEY (digest, role, turn_id))""",
    ],
]
"""`MIGRATIONS[n]` takes the layout from version n to n + 1. Derived objects (the index's trigger,
the views) are dropped and created again after any migration (`DERIVED`)."""

assert len(MIGRATIONS) == POSTGRES_STORE_VERSION

DROP_DERIVED = [
    "DROP VIEW IF EXISTS image_deliveries, image_origins, fuseforks_image_deliveries, "
    "fuseforks_image_origins, tool_calls",
    f"DROP TRIGGER IF EXISTS image_index ON {EVENTS}",
    "DROP FUNCTION IF EXISTS fuseforks_index_images()",
]

_ORIGIN_COLUMNS = ", ".join(OriginRow.__struct_fields__)
_DELIVERY_COLUMNS = ", ".join(DeliveryRow.__struct_fields__)

DERIVED = [
    # The image index, kept inside each append's transaction: one statement per append, so one
    # trigger call per append over the rows it inserted.
    """CREATE FUNCTION fuseforks_index_images() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO image_index (digest, turn_id, seq, role)
        SELECT i.value ->> 'digest', n.turn_id, n.seq,
               CASE n.kind WHEN 'RequestSent' THEN 'delivery' ELSE 'origin' END
        FROM new_events n CROSS JOIN LATERAL jsonb_array_elements(n.body::jsonb -> 'images') i
        WHERE n.kind IN ('RequestSent', 'ImagesNormalized')
        ORDER BY n.seq
        ON CONFLICT DO NOTHING;
        RETURN NULL;
    END $$""",
    f"""CREATE TRIGGER image_index AFTER INSERT ON {EVENTS}
        REFERENCING NEW TABLE AS new_events
        FOR EACH STATEMENT EXECUTE FUNCTION fuseforks_index_images()""",
    f"""CREATE VIEW tool_calls AS
        SELECT e.turn_id, e.seq, e.b ->> 'call_id' AS call_id, e.b ->> 'name' AS tool,
               coalesce(e.b ->> 'server', '') AS server
        FROM (SELECT turn_id, seq, body::jsonb AS b FROM {EVENTS}
              WHERE kind = 'ToolCalled') e""",
    # `image` (the image's place in its event's list) orders the images of one event as the
    # fold does; the public views leave it out, to have exactly the SQLite views' columns.
    f"""CREATE VIEW fuseforks_image_origins AS
        SELECT i.value ->> 'digest' AS digest, e.turn_id, e.seq, e.at,
               (e.b ->> 'round')::integer AS round,
               e.b ->> 'call_id' AS call_id,
               coalesce(c.tool, '') AS tool, coalesce(c.server, '') AS server,
               i.value ->> 'source_format' AS source_format,
               i.value ->> 'media_type' AS media_type,
               i.value ->> 'path' AS path,
               (i.value ->> 'width')::bigint AS width,
               (i.value ->> 'height')::bigint AS height,
               (i.value ->> 'size')::bigint AS size,
               i.image
        FROM (SELECT turn_id, seq, at, body::jsonb AS b FROM {EVENTS}
              WHERE kind = 'ImagesNormalized') e
        CROSS JOIN LATERAL jsonb_array_elements(e.b -> 'images') WITH ORDINALITY AS i(value, image)
        LEFT JOIN tool_calls c ON c.turn_id = e.turn_id AND c.call_id = e.b ->> 'call_id'""",
    f"""CREATE VIEW fuseforks_image_deliveries AS
        SELECT i.value ->> 'digest' AS digest, e.turn_id, e.seq AS request_seq, e.at,
               (e.b ->> 'round')::integer AS round,
               coalesce(e.b ->> 'purpose', 'round') AS purpose,
               e.b ->> 'wire' AS wire,
               e.b ->> 'model' AS model,
               e.b ->> 'endpoint_host' AS endpoint_host,
               i.value ->> 'placement' AS placement,
               i.value ->> 'call_id' AS call_id,
               coalesce(c.tool, '') AS tool,
               CASE (SELECT n.kind FROM {EVENTS} n
                     WHERE n.turn_id = e.turn_id AND n.seq > e.seq
                       AND n.kind IN ('ResponseReceived', 'RequestRefused', 'WireRejected400',
                                      'RequestSent', 'TurnEnded')
                     ORDER BY n.seq LIMIT 1)
                   WHEN 'ResponseReceived' THEN 'received'
                   WHEN 'RequestRefused' THEN 'refused'
                   WHEN 'WireRejected400' THEN 'refused'  -- its name in event version 1
                   ELSE 'unanswered' END AS outcome,
               EXISTS (SELECT 1 FROM {EVENTS} s
                       WHERE s.turn_id = e.turn_id AND s.kind = 'ImagesStripped' AND s.seq > e.seq
                         AND s.seq < coalesce((SELECT min(r.seq) FROM {EVENTS} r
                                               WHERE r.turn_id = e.turn_id AND r.seq > e.seq
                                                 AND r.kind = 'RequestSent'), 2147483647)
               ) AS stripped,
               coalesce((SELECT coalesce(t.body::jsonb ->> 'stop', 'answered')
                         FROM {EVENTS} t WHERE t.turn_id = e.turn_id AND t.kind = 'TurnEnded'
                         ORDER BY t.seq LIMIT 1),
                        'cut') AS turn_stop,
               i.image
        FROM (SELECT turn_id, seq, at, body::jsonb AS b FROM {EVENTS}
              WHERE kind = 'RequestSent') e
        CROSS JOIN LATERAL jsonb_array_elements(e.b -> 'images') WITH ORDINALITY AS i(value, image)
        LEFT JOIN tool_calls c ON c.turn_id = e.turn_id AND c.call_id = i.value ->> 'call_id'""",
    f"CREATE VIEW image_origins AS SELECT {_ORIGIN_COLUMNS} FROM fuseforks_image_origins",
    f"CREATE VIEW image_deliveries AS SELECT {_DELIVERY_COLUMNS} FROM fuseforks_image_deliveries",
]

BACKFILL = f"""INSERT INTO image_index (digest, turn_id, seq, role)
    SELECT i.value ->> 'digest', e.turn_id, e.seq,
           CASE e.kind WHEN 'RequestSent' THEN 'delivery' ELSE 'origin' END
    FROM {EVENTS} e CROSS JOIN LATERAL jsonb_array_elements(e.body::jsonb -> 'images') i
    WHERE e.kind IN ('RequestSent', 'ImagesNormalized')
    ORDER BY e.turn_id, e.seq
    ON CONFLICT DO NOTHING"""
"""Fills the index from the events, after a migration that rebuilt it."""

SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('fuseforks store layout'))"
"""Held while the layout is created or migrated, so two processes opening a new database at
once create it once."""

TABLES = """SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() ORDER BY table_name"""
VERSION = f"SELECT value FROM {META} WHERE key = 'store_version'"
IDENTITY = f"SELECT value FROM {META} WHERE key = 'store_id'"

# --- reading and writing -------------------------------------------------------------------------

TAIL = f"SELECT max(seq) FROM {EVENTS} WHERE turn_id = %s"
SETTLE = f"SELECT seq, body FROM {EVENTS} WHERE turn_id = %s AND seq BETWEEN %s AND %s ORDER BY seq"
"""What is stored at a round's seqs (is a round whose commit went unanswered stored?)."""
RUNNING = "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND state = 'active'"
"""Whether a session is still running a statement (a round whose client is gone may still be)."""
INSERT = f"""INSERT INTO {EVENTS} (turn_id, seq, kind, version, at, body)
    SELECT %s, * FROM unnest(%b::integer[], %b::text[], %b::integer[], %b::text[], %b::text[])
    WHERE (SELECT coalesce(max(seq), 0) FROM {EVENTS} WHERE turn_id = %s) = %s"""
"""A whole round in one statement, if it continues the turn's stored tail (else none of it): one
call of the index's trigger. The arrays go in binary, with nothing to escape. Two writers that
read the same tail both insert its next seq, and the primary key stops the second."""
READ = f"""SELECT seq, version, at, body FROM {EVENTS}
    WHERE turn_id = %s AND seq > %s ORDER BY seq"""
TURNS = f"""SELECT turn_id, count(*), min(at), max(at) FROM {EVENTS}
    GROUP BY turn_id ORDER BY min(at), turn_id"""
CONVERSATION = f"""SELECT turn_id, seq, version, at, body FROM {EVENTS}
    WHERE kind IN ('TurnStarted', 'TurnEnded') AND turn_id IN
        (SELECT turn_id FROM {EVENTS} WHERE kind = 'TurnStarted'
         AND body::jsonb ->> 'conversation_id' = %s)
    ORDER BY turn_id, seq"""
CONVERSATION_SIZE = f"""SELECT count(*) FROM {EVENTS}
    WHERE kind = 'TurnStarted' AND body::jsonb ->> 'conversation_id' = %s"""
OF_KINDS = f"""SELECT turn_id, seq, version, at, body FROM {EVENTS}
    WHERE kind IN ({{marks}}) ORDER BY at, turn_id, seq"""
FOLLOW = f"""SELECT tx::text::bigint, position, turn_id, seq, version, at, body FROM {EVENTS}
    WHERE (tx, position) > (%s::text::xid8, %s)
      AND tx < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY tx, position LIMIT %s"""
"""Events in the global order, from transactions older than every transaction still running:
a transaction that commits late has a smaller `tx` than those that started after it, and is not
passed over, because nothing at or after the oldest running transaction is read yet."""


POSTGRES = Dialect(
    mark="%s", tables=TABLES, version=VERSION, read=READ, tail=TAIL, turns=TURNS,
    conversation=CONVERSATION, conversation_size=CONVERSATION_SIZE, of_kinds=OF_KINDS,
    origins="fuseforks_image_origins", deliveries="fuseforks_image_deliveries",
    delivery_columns=_DELIVERY_COLUMNS, tie=", image", since_in_sql=False)
"""PostgreSQL's statements. The audit's hidden views carry an image ordinal (the fold's tie
order), and `since` is compared after the query by `AuditFilter.keeps`, with the same reading of
a time as the fold's."""
