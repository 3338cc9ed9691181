"""What the PostgreSQL store says in SQL — importable without psycopg.

The layout mirrors the SQLite store's (`fuseforks.stores.sqlite`): `events(turn_id, seq, kind,
version, at, body)` keyed by `(turn_id, seq)`, a version table `fuseforks_meta`, and the read
model's tables (`fuseforks.stores.read_tables`: the same columns and the same rows), written in
the statement that appends the events they derive from.
Two columns are PostgreSQL's own: `tx` (the writing transaction's id) and `position` (a
sequence), which give readers that follow the store a global order (see `PostgresStore.follow`).

- The body is `text`, not `jsonb`: it keeps the bytes msgspec wrote, exactly, so an export from
  PostgreSQL equals one from SQLite byte for byte, and reading never re-serializes.
- Text columns are `COLLATE "C"`: turn ids, times and digests sort by code point, as in SQLite,
  whatever the database's locale; `fuseforks turns` lists turns in the same order on both.
"""

from __future__ import annotations

from fuseforks.stores import read_tables
from fuseforks.stores.dialect import Dialect
from fuseforks.stores.sql import EVENTS, META

POSTGRES_STORE_VERSION = 3
"""Version of the PostgreSQL table layout (its own count, not the SQLite store's
`SQLITE_STORE_VERSION`, and not the events', which carry their own version). 1: events, the
image index, the audit views, an index of turns by conversation. 2: the read model's tables
replace the image index, its trigger and the views that derived the audit in SQL."""


_TYPES = {"text": 'text COLLATE "C"', "integer": "bigint", "boolean": "boolean"}


SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('fuseforks store layout'))"
"""Held while the layout is created or migrated, so two processes opening a new database at
once create it once."""

TABLES = """SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() ORDER BY table_name"""
VERSION = f"SELECT value FROM {META} WHERE key = 'store_version'"
ROWS_VERSION = f"SELECT value FROM {META} WHERE key = 'read_model_version'"
IDENTITY = f"SELECT value FROM {META} WHERE key = 'store_id'"
LEASES = "fuseforks_leases"
"""Who owns a turn, or the relay, and until when (`fuseforks.stores.leases`)."""

# --- reading and writing -------------------------------------------------------------------------

TAIL = f"SELECT max(seq) FROM {EVENTS} WHERE turn_id = %s"
SETTLE = f"SELECT seq, body FROM {EVENTS} WHERE turn_id = %s AND seq BETWEEN %s AND %s ORDER BY seq"
"""What is stored at a round's seqs (is a round whose commit went unanswered stored?)."""
RUNNING = "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND state = 'active'"
"""Whether a session is still running a statement (a round whose client is gone may still be)."""
_EVENTS_INSERT = f"""INSERT INTO {EVENTS} (turn_id, seq, kind, version, at, body)
    SELECT %s, * FROM unnest(%b::integer[], %b::text[], %b::integer[], %b::text[], %b::text[])
    WHERE (SELECT coalesce(max(seq), 0) FROM {EVENTS} WHERE turn_id = %s) = %s"""
_FENCE = f"""
    AND EXISTS (SELECT 1 FROM {LEASES} WHERE name = %s AND epoch = %s AND holder = %s)"""
"""What a fenced round adds: its turn's lease still at the epoch its writer took it."""


def _rows_insert(table: read_tables.TableSpec) -> str:
    columns = ", ".join(table.columns)
    upsert = read_tables.upsert(table, POSTGRES)
    return (f"INSERT INTO {table.name} ({columns}) SELECT {columns} FROM "
            f"jsonb_populate_recordset(NULL::{table.name}, %s::jsonb) "
            "WHERE EXISTS (SELECT 1 FROM stored) " + upsert[upsert.index("ON CONFLICT"):])


def insert(tables: tuple[str, ...], fenced: bool = False) -> str:
    """A whole round in one statement, if it continues the turn's stored tail (else none of it),
    with the read model's rows it changed in `tables` (each table's rows as one JSON array, read
    by the server into the table's own row type): one transaction, one round trip. The events'
    arrays go in binary, with nothing to escape. Two writers that read the same tail both insert
    its next seq, and the primary key stops the second. `fenced`: only while the turn's lease is
    at the writer's epoch (three more parameters: the lease, its epoch, its holder). Returns how
    many events it stored."""
    events = _EVENTS_INSERT + (_FENCE if fenced else "")
    parts = [f"WITH stored AS ({events} RETURNING 1)"]
    parts += [f"{name} AS ({_rows_insert(read_tables.BY_NAME[name])})" for name in tables]
    return ", ".join(parts) + " SELECT count(*) FROM stored"


READ = f"""SELECT seq, version, at, body FROM {EVENTS}
    WHERE turn_id = %s AND seq > %s ORDER BY seq"""
PREFIX = f"""SELECT seq, version, at, body FROM {EVENTS}
    WHERE turn_id = %s AND seq <= %s ORDER BY seq"""
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
    mark="%s", tables=TABLES, version=VERSION, rows_version=ROWS_VERSION, read=READ,
    prefix=PREFIX, tail=TAIL, turns=TURNS, conversation=CONVERSATION,
    conversation_size=CONVERSATION_SIZE, of_kinds=OF_KINDS, since_in_sql=False,
    turns_naming="{column} = ANY(ARRAY(SELECT turn_id FROM image_index WHERE digest = {mark}))",
    **_TYPES)
"""PostgreSQL's statements; `since` is compared after the query by `AuditFilter.keeps`, with the
same reading of a time as the fold's. The turns that name an image are read first, as an array:
a planner that has no statistics of the tables yet still looks them up by key."""


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
        """CREATE TABLE image_index (
            digest text COLLATE "C" NOT NULL,
            turn_id text COLLATE "C" NOT NULL,
            seq integer NOT NULL,
            role text COLLATE "C" NOT NULL,
            PRIMARY KEY (digest, role, turn_id))""",
    ],
    # 1 -> 2: the read model's tables instead of what layout 1 derived in SQL; their rows are
    # built from the events right after (`rebuild_rows`).
    [
        "DROP VIEW IF EXISTS image_deliveries, image_origins, fuseforks_image_deliveries, "
        "fuseforks_image_origins, tool_calls",
        f"DROP TRIGGER IF EXISTS image_index ON {EVENTS}",
        "DROP FUNCTION IF EXISTS fuseforks_index_images()",
        "DROP TABLE IF EXISTS image_index",
        *read_tables.create(POSTGRES),
    ],
    # 2 -> 3: leases, the ownership of turns and of the relay, and the fence of a turn's appends
    # (`fuseforks.stores.leases`).
    [
        f"""CREATE TABLE {LEASES} (
            name text COLLATE "C" PRIMARY KEY,
            holder text COLLATE "C" NOT NULL,
            epoch bigint NOT NULL,
            session integer NOT NULL,
            session_start timestamptz,
            expires_at timestamptz NOT NULL,
            value text COLLATE "C" NOT NULL DEFAULT '')""",
    ],
]
"""`MIGRATIONS[n]` takes the layout from version n to n + 1."""

assert len(MIGRATIONS) == POSTGRES_STORE_VERSION
