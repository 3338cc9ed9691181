"""Events as an older fuseforks wrote them: the lines of a stream stored as they are, with their
old schema version and exact bytes, straight into a store's table (what a store written by
fuseforks of that version holds — importing would upcast them first)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import psycopg

from fuseforks.events.codec import SCHEMA_VERSION
from fuseforks.stores.sqlite import SqliteStore

REPLAYS = Path(__file__).resolve().parents[2] / "replays"

Row = tuple[str, int, str, int, str, str]
"""turn_id, seq, kind, version, at, body."""


class _Line(msgspec.Struct):
    turn_id: str
    seq: int
    at: str
    event: msgspec.Raw
    version: int = SCHEMA_VERSION


class _Kind(msgspec.Struct):
    kind: str


def raw_rows(*paths: Path) -> list[Row]:
    rows: list[Row] = []
    for path in paths:
        for line in path.read_bytes().splitlines():
            if line.strip():
                raw = msgspec.json.decode(line, type=_Line)
                body = bytes(raw.event)
                kind = msgspec.json.decode(body, type=_Kind).kind
                rows.append((raw.turn_id, raw.seq, kind, raw.version, raw.at, body.decode()))
    return rows


_INSERT = "INSERT INTO events (turn_id, seq, kind, version, at, body) VALUES "


def insert_sqlite(store: SqliteStore, rows: list[Row]) -> None:
    with store.db.atomic():
        store.db.conn.executemany(_INSERT + "(?, ?, ?, ?, ?, ?)", rows)


def insert_postgres(url: str, rows: list[Row]) -> None:
    with psycopg.connect(url) as connection, connection.cursor() as cursor:
        cursor.executemany(_INSERT + "(%s, %s, %s, %s, %s, %s)", rows)
