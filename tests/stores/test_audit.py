"""The store's SQL and the fold select the same deliveries, whatever form a recorded time has
(clock times, and times from a stream written elsewhere: offsets, no milliseconds, garbage)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from fuseforks.projections.audit import AuditFilter, at_key, audit_rows, select, since_key
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import camera_turn, digest

TIMES = {
    "clock": "2026-11-30T08:48:54.057Z",
    "offset": "2026-11-30T09:48:54.0575+01:00",
    "whole": "2026-11-30T08:48:54Z",
    "spaced": "2026-11-30 08:48:54.9996",
    "minutes": "2026-11-30T08:49",
    "garbage": "yesterday-ish",
}


def test_at_key_reads_times_as_sqlite_does(tmp_path: Path) -> None:
    assert {name: at_key(at) for name, at in TIMES.items()} == {
        "clock": "2026-11-30T08:48:54.057Z",
        "offset": "2026-11-30T08:48:54.058Z",
        "whole": "2026-11-30T08:48:54.000Z",
        "spaced": "2026-11-30T08:48:55.000Z",
        "minutes": "2026-11-30T08:49:00.000Z",
        "garbage": None,
    }
    with SqliteStore(tmp_path / "s.db") as store:
        sqlite = {name: store.db.execute("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ?)",
                                         [at]).fetchone()[0] for name, at in TIMES.items()}
    assert sqlite == {name: at_key(at) for name, at in TIMES.items()}


def test_since_key_rounds_up_to_the_millisecond() -> None:
    assert since_key(datetime.fromisoformat("2026-11-30T09:48:54.0571+01:00")) == (
        "2026-11-30T08:48:54.058Z")
    assert since_key(datetime.fromisoformat("2026-11-30T08:48:54+00:00")) == (
        "2026-11-30T08:48:54.000Z")


@pytest.mark.parametrize(("since", "expected"), [
    (None, ["whole", "clock", "offset", "spaced", "minutes", "garbage"]),
    ("2026-11-30T08:48:54.000Z", ["whole", "clock", "offset", "spaced", "minutes"]),
    ("2026-11-30T08:48:54.058Z", ["offset", "spaced", "minutes"]),
    ("2026-11-30T08:48:54.059Z", ["spaced", "minutes"]),
    ("2026-11-30T08:49:00.000Z", ["minutes"]),
])
def test_sql_and_fold_select_the_same_deliveries(tmp_path: Path, since: str | None,
                                                 expected: list[str]) -> None:
    turns = [camera_turn(name, [digest(i + 1)], start="2026-11-30T08:00:00.000Z", delivered_at=at)
             for i, (name, at) in enumerate(TIMES.items())]
    with SqliteStore(tmp_path / "s.db") as store:
        for turn in turns:
            store.append(turn)
        where = AuditFilter(since=since)
        in_sql = store.audit(where)
    folded = select(audit_rows(e for turn in turns for e in turn), where)
    assert in_sql == folded
    assert sorted((at_key(d.at) or "", d.turn_id) for d in in_sql.deliveries) == sorted(
        (at_key(d.at) or "", d.turn_id) for d in folded.deliveries)
    assert sorted(d.turn_id for d in in_sql.deliveries) == sorted(expected)


@pytest.mark.parametrize("where", [
    AuditFilter(until="2026-11-30T08:48:54.059Z"),
    AuditFilter(since="2026-11-30T08:48:54.000Z", until="2026-11-30T08:49:00.000Z"),
    AuditFilter(outcome="received"),
    AuditFilter(outcome="refused"),
])
def test_sql_and_fold_agree_on_until_and_outcome(tmp_path: Path, where: AuditFilter) -> None:
    turns = [camera_turn(name, [digest(i + 1)], start="2026-11-30T08:00:00.000Z", delivered_at=at)
             for i, (name, at) in enumerate(TIMES.items())]
    with SqliteStore(tmp_path / "s.db") as store:
        for turn in turns:
            store.append(turn)
        in_sql = store.audit(where)
    folded = select(audit_rows(e for turn in turns for e in turn), where)
    assert in_sql == folded
    assert all(where.keeps(d) for d in in_sql.deliveries)
