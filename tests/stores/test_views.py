"""The audit in PostgreSQL: the image index and the views `tool_calls`, `image_origins` and
`image_deliveries` hold the same rows as SQLite's for the same events — today's streams, and
events stored by fuseforks of schema versions 0 and 1 (`WireRejected400` counts as refused)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fuseforks.projections.audit import AuditFilter, audit_rows, select
from fuseforks.stores.jsonl import import_stream
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import camera_turn, digest
from tests.stores.raw import REPLAYS, insert_postgres, insert_sqlite, raw_rows
from tests.stores.test_audit import TIMES

RELATIONS = ["tool_calls", "image_origins", "image_deliveries", "image_index"]


def rows_of(cursor: Any) -> tuple[list[str], Counter[tuple[Any, ...]]]:
    names = [d[0] for d in cursor.description]
    rows = [tuple(int(v) if isinstance(v, bool) else v for v in row) for row in cursor.fetchall()]
    return names, Counter(rows)


def in_sqlite(store: SqliteStore, relation: str) -> tuple[list[str], Counter[tuple[Any, ...]]]:
    return rows_of(store.db.execute(f"SELECT * FROM {relation}"))


def in_postgres(url: str, relation: str) -> tuple[list[str], Counter[tuple[Any, ...]]]:
    with psycopg.connect(url) as connection:
        return rows_of(connection.execute(f"SELECT * FROM {relation}".encode()))


def fill(kind: str, lite: SqliteStore, store: PostgresStore, url: str) -> None:
    if kind == "today":
        for path in sorted(REPLAYS.glob("*.jsonl")):
            import_stream(lite, path)
            import_stream(store, path)
    elif kind == "crafted":
        turns = [camera_turn(name, [digest(i + 1), digest(i + 2)], delivered_at=at, wire=wire,
                             ended=i % 3 != 0)
                 for i, ((name, at), wire) in enumerate(zip(
                     TIMES.items(), ["anthropic", "gemini", "openai-compat"] * 2, strict=True))]
        for turn in turns:
            lite.append(turn)
            store.append(turn)
    else:
        rows = raw_rows(*sorted((REPLAYS / kind).glob("*.jsonl")))
        insert_sqlite(lite, rows)
        insert_postgres(url, rows)


@pytest.mark.parametrize("kind", ["today", "crafted", "v1", "v0"])
def test_the_postgres_views_hold_the_sqlite_views_rows(kind: str, pg_url: str,
                                                       tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as lite, PostgresStore(pg_url) as store:
        fill(kind, lite, store, pg_url)
        compared = {relation: in_postgres(pg_url, relation) for relation in RELATIONS}
        assert compared == {relation: in_sqlite(lite, relation) for relation in RELATIONS}
        deliveries = compared["image_deliveries"][1]
        assert sum(deliveries.values()) > 0
        if kind == "v1":  # the refused request of the image-refusing model, recorded in v1
            outcomes = Counter(row[12] for row in deliveries.elements())
            assert outcomes["refused"] == 1


@pytest.mark.parametrize("kind", ["today", "crafted"])
def test_the_audit_answers_alike_on_both_stores_and_as_the_fold(kind: str, pg_url: str,
                                                               tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as lite, PostgresStore(pg_url) as store:
        fill(kind, lite, store, pg_url)
        folded = audit_rows(e for t in lite.turns() for e in lite.read(t.turn_id))
        everything = lite.audit(AuditFilter())
        wheres = [AuditFilter()]
        wheres += [AuditFilter(digest=d) for d in sorted({r.digest for r in everything.deliveries})]
        wheres += [AuditFilter(wire=w) for w in ("anthropic", "gemini", "openai-compat")]
        wheres += [AuditFilter(tool="nik__live_view_image"), AuditFilter(tool="cam__shot"),
                   AuditFilter(model="claude-sonnet-5-5", since="2026-11-30T08:48:54.058Z")]
        wheres += [AuditFilter(since=since) for since in (
            "2026-11-30T00:00:00.000Z", "2026-11-30T08:48:54.000Z", "2026-11-30T08:49:00.000Z")]
        for where in wheres:
            assert store.audit(where) == lite.audit(where) == select(folded, where), where
        for prefix in ("", "1", "2", "3f", "ab"):
            assert store.digests(prefix) == lite.digests(prefix)
        assert everything.deliveries
