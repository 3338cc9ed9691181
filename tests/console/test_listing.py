"""The turns page's index and the record it reads, without a browser: a turn is folded again only
when its record grew, the filters keep what they say, and the list of a store's turns is read
again exactly when its files change."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fuseforks.console.listing import Listed, TurnFilter, TurnIndex
from fuseforks.console.record import Record
from fuseforks.events.codec import Envelope
from fuseforks.projections.audit import AuditFilter, AuditRows
from fuseforks.projections.summary import turn_summary
from fuseforks.stores.jsonl import group_turns
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import TurnInfo
from tests.cli.crafted import camera_turn, digest, write_jsonl


class Counting:
    """A reader that counts the turns it was asked to read."""

    def __init__(self, envelopes: list[Envelope]) -> None:
        self.inner = MemoryStore()
        for turn in group_turns(envelopes).values():
            self.inner.append(turn)
        self.reads: list[str] = []

    def turns(self) -> list[TurnInfo]:
        return self.inner.turns()

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        self.reads.append(turn_id)
        return self.inner.read(turn_id, after)

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        return self.inner.of_kinds(kinds)

    def audit(self, where: AuditFilter) -> AuditRows:
        return self.inner.audit(where)

    def digests(self, prefix: str) -> list[str]:
        return self.inner.digests(prefix)


def turns(count: int) -> list[Envelope]:
    return [e for n in range(count) for e in camera_turn(
        f"t{n:02d}", [digest(n)], start=f"2026-11-30T08:{n:02d}:00.000Z",
        wire="gemini" if n % 3 == 0 else "anthropic", ended=n != 4)]


def test_a_page_folds_only_its_own_turns_and_each_once_until_it_grows() -> None:
    index = TurnIndex()
    reader = Counting(turns(7))
    first = index.page(reader, reader.turns(), TurnFilter(), page=1, size=3)
    assert [r.summary.turn_id for r in first.rows] == ["t06", "t05", "t04"]
    assert (first.matching, first.stored, first.page, first.pages) == (7, 7, 1, 3)
    assert reader.reads == ["t06", "t05", "t04"]
    again = index.page(reader, reader.turns(), TurnFilter(), page=1, size=3)
    assert again == first and reader.reads == ["t06", "t05", "t04"]
    last = index.page(reader, reader.turns(), TurnFilter(), page=9, size=3)
    assert ([r.summary.turn_id for r in last.rows], last.page) == (["t00"], 3)

    grown = Counting([*turns(7), *camera_turn("t04", [digest(4)],
                                              start="2026-11-30T08:04:00.000Z")[10:]])
    assert grown.turns()[4].events == 11
    rows = index.page(grown, grown.turns(), TurnFilter(), page=1, size=3).rows
    assert grown.reads == ["t04"]
    assert rows[2] == Listed(summary=turn_summary(grown.read("t04")), conversation="")
    assert rows[2].summary.stop == "answered"


def test_a_filter_on_what_the_events_say_folds_every_turn_once() -> None:
    index = TurnIndex()
    reader = Counting(turns(7))
    page = index.page(reader, reader.turns(), TurnFilter(wire="gemini"))
    assert [r.summary.turn_id for r in page.rows] == ["t06", "t03", "t00"]
    assert (page.matching, page.stored) == (3, 7)
    assert sorted(reader.reads) == [f"t{n:02d}" for n in range(7)]
    cut = index.page(reader, reader.turns(), TurnFilter(stop="cut"))
    assert [r.summary.turn_id for r in cut.rows] == ["t04"]
    assert len(reader.reads) == 7


def test_since_and_until_bound_the_start() -> None:
    index = TurnIndex()
    reader = Counting(turns(7))
    page = index.page(reader, reader.turns(), TurnFilter(since="2026-11-30T08:02:00.000Z",
                                                         until="2026-11-30T08:05:00.000Z"))
    assert [r.summary.turn_id for r in page.rows] == ["t04", "t03", "t02"]
    assert sorted(reader.reads) == ["t02", "t03", "t04"]


def test_a_stores_turn_list_is_read_again_when_its_files_change(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path) as store:
        store.append(camera_turn("t1", [digest(1)]))
    record = Record(path)
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
    record = Record(stream)
    with record.reading() as reader:
        assert [t.turn_id for t in record.turns(reader)] == ["t1"]
        assert reader.digests(digest(1)[:6]) == [digest(1)]
    write_jsonl(stream, [*camera_turn("t1", [digest(1)]),
                         *camera_turn("t2", [digest(2)], start="2026-11-30T09:00:00.000Z")])
    with record.reading() as reader:
        assert [t.turn_id for t in record.turns(reader)] == ["t1", "t2"]
        assert len(reader.audit(AuditFilter()).deliveries) == 2
