"""The turns page and the record it reads, without a browser: summaries a page at a time, newest
first, the filters keep what they say — in SQL as in the fold —, and a stream is read again
exactly when its file changes."""

from __future__ import annotations

from pathlib import Path

from fuseforks.console.listing import TurnFilter, page
from fuseforks.console.source import RecordSource
from fuseforks.events.codec import Envelope
from fuseforks.projections.audit import AuditFilter
from fuseforks.stores.jsonl import group_turns
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import TurnInfo
from tests.cli.crafted import camera_turn, digest, write_jsonl


def turns(count: int) -> list[Envelope]:
    return [e for n in range(count) for e in camera_turn(
        f"t{n:02d}", [digest(n)], start=f"2026-11-30T08:{n:02d}:00.000Z",
        wire="gemini" if n % 3 == 0 else "anthropic", ended=n != 4)]


def memory(envelopes: list[Envelope]) -> MemoryStore:
    store = MemoryStore()
    for turn in group_turns(envelopes).values():
        store.append(turn)
    return store


def test_a_page_lists_the_newest_first_a_page_at_a_time() -> None:
    listed = memory(turns(7))
    first = page(listed, TurnFilter(), 1, size=3)
    assert [s.turn_id for s in first.rows] == ["t06", "t05", "t04"]
    assert (first.matching, first.stored, first.page, first.pages) == (7, 7, 1, 3)
    last = page(listed, TurnFilter(), 9, size=3)
    assert ([s.turn_id for s in last.rows], last.page) == (["t00"], 3)
    grown = memory([*turns(7), *camera_turn("t04", [digest(4)],
                                            start="2026-11-30T08:04:00.000Z")[10:]])
    row = page(grown, TurnFilter(), 1, size=3).rows[2]
    assert (row.turn_id, row.stop, row.events) == ("t04", "answered", 11)


def test_a_filter_keeps_what_it_says() -> None:
    listed = memory(turns(7))
    gemini = page(listed, TurnFilter(wire="gemini"))
    assert [s.turn_id for s in gemini.rows] == ["t06", "t03", "t00"]
    assert (gemini.matching, gemini.stored) == (3, 7)
    assert [s.turn_id for s in page(listed, TurnFilter(stop="cut")).rows] == ["t04"]
    assert page(listed, TurnFilter(conversation="nope")).rows == []


def test_since_and_until_bound_the_start() -> None:
    listing = page(memory(turns(7)), TurnFilter(since="2026-11-30T08:02:00.000Z",
                                                until="2026-11-30T08:05:00.000Z"))
    assert [s.turn_id for s in listing.rows] == ["t04", "t03", "t02"]


FILTERS = [TurnFilter(), TurnFilter(wire="gemini"), TurnFilter(stop="cut"),
           TurnFilter(model="claude-sonnet-5-5", since="2026-11-30T08:02:00.000Z"),
           TurnFilter(until="2026-11-30T08:03:00.000Z"), TurnFilter(conversation="")]


def test_an_sql_store_pages_its_summaries_as_the_fold_does(tmp_path: Path) -> None:
    envelopes = turns(9)
    with SqliteStore(tmp_path / "s.db") as store:
        for turn in group_turns(envelopes).values():
            store.append(turn)
        folded = memory(envelopes)
        for where in FILTERS:
            for number in (1, 2, 3, 4):
                assert page(store, where, number, size=2) == page(folded, where, number, size=2)
        assert store.summaries(newest_first=True, offset=7) == folded.summaries(
            newest_first=True, offset=7)


def test_a_stores_turn_list_is_read_again_when_its_files_change(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path) as store:
        store.append(camera_turn("t1", [digest(1)]))
    record = RecordSource(path)
    calls = []

    class Listing:
        def __init__(self, store: SqliteStore) -> None:
            self.store = store

        def turns(self) -> list[TurnInfo]:
            calls.append(1)
            return self.store.turns()

    with record.reading() as reader:
        assert isinstance(reader, SqliteStore)
        first = record.turns(Listing(reader))  # type: ignore[arg-type]
        assert record.turns(Listing(reader)) is first  # type: ignore[arg-type]
    assert (calls, [t.turn_id for t in first]) == ([], ["t1"])  # read when the record opened
    writer = SqliteStore(path)
    try:
        writer.append(camera_turn("t2", [digest(2)], start="2026-11-30T09:00:00.000Z"))
        with record.reading() as reader:
            assert [t.turn_id for t in record.turns(Listing(reader))] == ["t1", "t2"]  # type: ignore[arg-type]
        assert calls == [1]
    finally:
        writer.close()
        record.close()


def test_a_stream_is_read_again_when_the_file_changes(tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "turns.jsonl", camera_turn("t1", [digest(1)]))
    record = RecordSource(stream)
    with record.reading() as reader:
        assert [t.turn_id for t in record.turns(reader)] == ["t1"]
        assert reader.digests(digest(1)[:6]) == [digest(1)]
    write_jsonl(stream, [*camera_turn("t1", [digest(1)]),
                         *camera_turn("t2", [digest(2)], start="2026-11-30T09:00:00.000Z")])
    with record.reading() as reader:
        assert [t.turn_id for t in record.turns(reader)] == ["t1", "t2"]
        assert len(reader.audit(AuditFilter()).deliveries) == 2
