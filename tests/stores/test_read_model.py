"""The read model's tables hold the fold's rows, on both SQL stores: for today's streams, for
turns crafted to end in every way, and for events stored by fuseforks of schema versions 0 to 3
(`WireRejected400` counts as refused) — the rows a store wrote with its appends, or built again
from its events, are the rows `read_rows` folds from the same events. And a fold that changes
is followed: its rows are built again when the store is opened."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from fuseforks.projections import read_model
from fuseforks.projections.audit import AuditFilter, audit_rows, select
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import camera_turn, digest
from tests.helpers.streams import import_stream
from tests.stores.parity import assert_rows_are_the_folds, in_sqlite
from tests.stores.raw import REPLAYS, insert_postgres, insert_sqlite, raw_rows
from tests.stores.test_audit import TIMES


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
    else:  # events as an older fuseforks stored them, under the store: its rows built again
        rows = raw_rows(*sorted((REPLAYS / kind).glob("*.jsonl")))
        insert_sqlite(lite, rows)
        insert_postgres(url, rows)
        lite.rebuild_rows()
        store.rebuild_rows()


@pytest.mark.parametrize("kind", ["today", "crafted", "v3", "v2", "v1", "v0"])
def test_the_tables_hold_the_folds_rows_on_both_stores(kind: str, pg_url: str,
                                                      tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as lite, PostgresStore(pg_url) as store:
        fill(kind, lite, store, pg_url)
        rows = assert_rows_are_the_folds(pg_url)
        assert assert_rows_are_the_folds(lite.path) == rows
        deliveries = audit_rows(e for t in lite.turns() for e in lite.read(t.turn_id)).deliveries
        assert deliveries and rows.summaries
        if kind == "v1":  # the refused request of the image-refusing model, recorded in v1
            assert Counter(row.outcome for row in deliveries)["refused"] == 1


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


def test_a_changed_fold_is_followed_when_the_store_is_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as lite:
        import_stream(lite, REPLAYS / "p4-anthropic.jsonl")
    [before] = SqliteStore(path, read_only=True).summaries()
    assert before.agent == "replay"
    shouted = read_model.summary_of

    def changed(state: Any) -> Any:
        summary = shouted(state)
        return msgspec.structs.replace(summary, agent=summary.agent.upper())

    monkeypatch.setattr(read_model, "summary_of", changed)
    monkeypatch.setattr(read_model, "READ_MODEL_VERSION", read_model.READ_MODEL_VERSION + 1)
    with SqliteStore(path, read_only=True) as stale:  # an auditor's older rows: folded instead
        assert [s.agent for s in stale.summaries()] == ["REPLAY"]
        names, rows = in_sqlite(stale, "turn_summaries")
        assert [row[names.index("agent")] for row in rows] == ["replay"]
    with SqliteStore(path) as writer:
        assert writer.rows_version == read_model.READ_MODEL_VERSION
    with SqliteStore(path, read_only=True) as reread:
        names, rows = in_sqlite(reread, "turn_summaries")
        assert [row[names.index("agent")] for row in rows] == ["REPLAY"]
        assert [s.agent for s in reread.summaries()] == ["REPLAY"]
