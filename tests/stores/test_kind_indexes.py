"""SQLite layout 4: one small index per kind read across turns instead of an index of every
event's kind (which cost each append a page of the index per kind in it). The kinds read across
turns still come from an index; an older store is brought to the new layout when opened for
writing, and read as it is when opened read-only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import PlacementLearned, RoundStarted, TurnEnded
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import INDEXED_KINDS, SQLITE_STORE_VERSION, SqliteStore
from tests.stores.older import as_layout

PLACEMENT = PlacementLearned(round=1, wire="anthropic", model="m", endpoint_host="h",
                             placement="native", outcome="received")


def _fill(store: SqliteStore | MemoryStore) -> None:
    for n, start in enumerate(["2026-12-02T00:00:02.000Z", "2026-12-02T00:00:01.000Z"]):
        store.append(Sequencer(f"turn-{n}", FixedClock(start)).seal(
            [RoundStarted(round=1), PLACEMENT, TurnEnded(rounds=1, stop="answered")]))


def _indexes(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return sorted(name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"))


def _plan(store: SqliteStore, kinds: list[str]) -> str:
    sql, params = store._of_kinds_query(kinds)
    return " / ".join(row[3] for row in store.db.execute(f"EXPLAIN QUERY PLAN {sql}", params))


def test_a_new_store_indexes_only_the_kinds_read_across_turns(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        _fill(store)
        assert _plan(store, ["PlacementLearned"]) == (
            "SCAN events USING INDEX events_PlacementLearned")
        assert "USING INDEX events_ResultSent" in _plan(store, ["ResultSent"])
        reference = MemoryStore()
        _fill(reference)
        for kinds in (["PlacementLearned"], ["PlacementLearned", "TurnEnded"], ["TurnEnded"],
                      ["RoundStarted", "ResultSent"], []):
            assert store.of_kinds(kinds) == reference.of_kinds(kinds), kinds
        found = store.of_kinds(["PlacementLearned", "TurnEnded"])
        assert [(e.turn_id, e.kind) for e in found] == [
            ("turn-1", "PlacementLearned"), ("turn-1", "TurnEnded"),
            ("turn-0", "PlacementLearned"), ("turn-0", "TurnEnded")]
    assert [name for name in _indexes(path) if name.startswith("events_")] == sorted(
        ["events_by_conversation", *(f"events_{kind}" for kind in INDEXED_KINDS)])


def test_a_layout_3_store_is_read_as_it_is_and_upgraded_when_written(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        _fill(store)
        before = store.of_kinds(["PlacementLearned", "TurnEnded"])
    as_layout(path, 3)
    with SqliteStore(path, read_only=True) as old:
        assert old.layout_version == 3
        assert old.of_kinds(["PlacementLearned", "TurnEnded"]) == before
        assert "USING INDEX events_kind" in _plan(old, ["PlacementLearned"])
        assert old.image_deliveries() == []  # its rows are folded from its events
    assert "events_kind" in _indexes(path)
    with SqliteStore(path) as store:
        assert store.layout_version == SQLITE_STORE_VERSION == 5
        assert store.of_kinds(["PlacementLearned", "TurnEnded"]) == before
    assert "events_kind" not in _indexes(path)
    assert "events_PlacementLearned" in _indexes(path)
