"""One contract, every store, at the tiers it claims (`fuseforks.stores.store`): the turn log over
the in-memory reference, the SQLite file and the PostgreSQL database (a real server:
`tests.stores.server`); the record over those three and a JSON Lines stream, each opened for
reading as the commands open it (`open_record`); the ordered record over PostgreSQL. The tests
are the same for every backend of a tier; only the fixtures know which backend they hold."""

from __future__ import annotations

import base64
import io
import random
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import msgspec
import pytest
from PIL import Image

from fuseforks.core.errors import ConcurrencyError, StoreError
from fuseforks.events.codec import Envelope, encode_envelope
from fuseforks.events.privacy import PixelLeakError
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import ResultSent, RoundStarted, TurnEnded, TurnStarted
from fuseforks.projections.audit import AuditFilter, audit_rows, select
from fuseforks.stores.jsonl import (
    TurnImport,
    group_turns,
    read_stream,
    write_stream,
)
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.open import open_record, open_store
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import (
    EventStore,
    OrderedRecord,
    OrderedStore,
    Position,
    Record,
    TurnLog,
)
from fuseforks.stores.stream import StreamRecord
from tests.cli.crafted import camera_turn, digest
from tests.events.samples import SAMPLES
from tests.helpers.streams import export_turn, import_stream
from tests.stores.conftest import ORDERED, RECORDS, target
from tests.stores.raw import REPLAYS, insert_postgres, insert_sqlite, raw_rows


def sealed(turn_id: str, events, last_seq: int = 0, start: str = "2026-11-30T00:00:00.000Z"):
    return Sequencer(turn_id, FixedClock(start), last_seq).seal(events)


# --- the turn log: memory, SQLite, PostgreSQL ------------------------------------------------------


def test_append_then_read_returns_the_same_envelopes_in_order(log: TurnLog) -> None:
    first = sealed("t1", SAMPLES[:5])
    second = sealed("t1", SAMPLES[5:], last_seq=5)
    log.append(first)
    log.append(second)
    assert log.read("t1") == first + second
    last = len(SAMPLES)
    assert [e.seq for e in log.read("t1", after=last - 2)] == [last - 1, last]
    assert log.last_seq("t1") == len(SAMPLES)
    assert log.last_seq("unknown") == 0
    assert log.read("unknown") == []


def test_an_append_that_does_not_continue_the_sequence_is_refused(log: TurnLog) -> None:
    log.append(sealed("t1", SAMPLES[:3]))
    with pytest.raises(ConcurrencyError, match="turn t1: expected seq 4, got 3"):
        log.append(sealed("t1", SAMPLES[3:5], last_seq=2))
    with pytest.raises(ConcurrencyError, match="expected seq 4, got 5"):
        log.append(sealed("t1", SAMPLES[3:5], last_seq=4))
    assert [e.seq for e in log.read("t1")] == [1, 2, 3]


def test_a_round_that_fails_midway_leaves_nothing_of_itself(log: TurnLog) -> None:
    log.append(sealed("t1", [RoundStarted(round=1)]))
    good = sealed("t1", [RoundStarted(round=2), RoundStarted(round=3)], last_seq=1)
    gap = Envelope(turn_id="t1", seq=9, at="x", event=RoundStarted(round=4))
    with pytest.raises(ConcurrencyError):
        log.append([*good, gap])
    assert [e.seq for e in log.read("t1")] == [1]


def test_export_then_import_moves_a_turn_unchanged(log: EventStore, tmp_path) -> None:
    original = sealed("t1", SAMPLES)
    log.append(original)
    path = tmp_path / "t1.jsonl"
    assert export_turn(log, "t1", path) == len(SAMPLES)
    assert path.read_bytes().count(b"\n") == len(SAMPLES)
    target = MemoryStore()
    assert import_stream(target, path) == [
        TurnImport(turn_id="t1", outcome="imported", added=(1, len(SAMPLES)))]
    assert target.read("t1") == original
    assert read_stream(path) == original


def png_base64() -> str:
    """A small noisy PNG as base64: image data, and longer than the privacy guard's run limit."""
    image = Image.frombytes("RGB", (16, 16), random.Random(7).randbytes(16 * 16 * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_every_store_refuses_an_envelope_carrying_base64_image_data_and_keeps_nothing_of_its_batch(
    log: EventStore,
) -> None:
    data = png_base64()
    kept = sealed("t1", [RoundStarted(round=1)])
    log.append(kept)
    leaking = TurnEnded(rounds=1, stop="answered", answer=f"Here is the frame: {data}")
    # Handed straight to the store: sealing would have refused it first.
    batch = [*sealed("t1", [RoundStarted(round=2)], last_seq=1),
             Envelope(turn_id="t1", seq=3, at="2026-11-30T00:00:01.000Z", event=leaking)]
    with pytest.raises(PixelLeakError, match=r"refusing to store TurnEnded #3: it holds a base64 run"):
        log.append(batch)
    alone = Envelope(turn_id="t2", seq=1, at="2026-11-30T00:00:02.000Z", event=leaking)
    with pytest.raises(PixelLeakError, match=r"refusing to store TurnEnded #1"):
        log.append([alone])
    assert log.read("t1") == kept
    assert log.last_seq("t1") == 1
    assert log.read("t2") == []
    assert [(t.turn_id, t.events) for t in log.turns()] == [("t1", 1)]


# --- the record: memory, SQLite, PostgreSQL and a JSON Lines stream --------------------------------


class Recorded:
    """Puts turns into the record under test the way its backend gets them — appended to a store,
    or written as a stream — and opens it for reading as the commands do."""

    def __init__(self, kind: str, request: pytest.FixtureRequest, folder: Path,
                 opened: ExitStack) -> None:
        self.kind, self._request, self._folder, self._opened = kind, request, folder, opened

    def turns(self, *turns: list[Envelope]) -> Record:
        """A record holding `turns`, each appended in one unit of work, in the order given."""
        if self.kind == "memory":
            store = MemoryStore()
            for turn in turns:
                store.append(turn)
            return store
        if self.kind == "stream":
            with open(self._folder / "turns.jsonl", "wb") as out:
                write_stream([e for turn in turns for e in turn], out)
            return self._open(self._folder / "turns.jsonl")
        where = target(self.kind, self._request, self._folder)
        with open_store(where) as store:
            for turn in turns:
                store.append(turn)
        return self._open(where)

    def lines(self, *paths: Path) -> Record:
        """A record holding the streams at `paths` as the fuseforks that wrote them stored them:
        older schema versions, exact bytes (a memory store holds what it is given: decoded)."""
        if self.kind == "memory":
            store = MemoryStore()
            for path in paths:
                for turn in group_turns(read_stream(path)).values():
                    store.append(turn)
            return store
        if self.kind == "stream":
            joined = self._folder / "older.jsonl"
            joined.write_bytes(b"".join(path.read_bytes() for path in paths))
            return self._open(joined)
        where = target(self.kind, self._request, self._folder)
        rows = raw_rows(*paths)
        if isinstance(where, Path):
            with SqliteStore(where) as store:
                insert_sqlite(store, rows)
                store.rebuild_rows()  # rows put in under the store: its read model follows
        else:
            PostgresStore(where).close()
            insert_postgres(where, rows)
            with PostgresStore(where) as store:
                store.rebuild_rows()
        return self._open(where)

    def _open(self, where: str | Path) -> Record:
        return self._opened.enter_context(open_record(where))


@pytest.fixture(params=RECORDS)
def recorded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Recorded]:
    with ExitStack() as opened:
        yield Recorded(request.param, request, tmp_path, opened)


def started_in(conversation: str, turn: list[Envelope]) -> list[Envelope]:
    """`turn`, its `TurnStarted` in `conversation`."""
    first = turn[0]
    assert isinstance(first.event, TurnStarted)
    event = msgspec.structs.replace(first.event, conversation_id=conversation)
    return [msgspec.structs.replace(first, event=event), *turn[1:]]


def test_a_record_reads_a_turn_whole_or_after_a_seq(recorded: Recorded) -> None:
    turn = sealed("t1", SAMPLES)
    record = recorded.turns(turn)
    assert record.read("t1") == turn
    assert record.read("t1", after=len(SAMPLES) - 2) == turn[-2:]
    assert record.read("unknown") == []


def test_turns_are_listed_oldest_first_with_counts_and_times(recorded: Recorded) -> None:
    early = sealed("early", SAMPLES[:3], start="2026-11-30T09:00:00.000Z")
    early[-1] = msgspec.structs.replace(early[-1], at="2026-11-30T11:00:00.000Z")
    record = recorded.turns(sealed("late", SAMPLES[:2], start="2026-11-30T10:00:00.000Z"), early)
    assert [(t.turn_id, t.events, t.first_at, t.last_at) for t in record.turns()] == [
        ("early", 3, "2026-11-30T09:00:00.000Z", "2026-11-30T11:00:00.000Z"),
        ("late", 2, "2026-11-30T10:00:00.000Z", "2026-11-30T10:00:00.000Z"),
    ]


def test_a_conversation_is_the_start_and_end_of_each_of_its_turns(recorded: Recorded) -> None:
    b = started_in("conv-1", camera_turn("b", [digest(1)], start="2026-11-30T08:00:00.000Z"))
    a = started_in("conv-1", camera_turn("a", [digest(2)], start="2026-11-30T09:00:00.000Z"))
    other = started_in("conv-2", camera_turn("c", [digest(3)]))
    cut = started_in("conv-1", camera_turn("d", [digest(4)], ended=False))
    record = recorded.turns(b, other, a, cut)
    assert record.conversation("conv-1") == [a[0], a[-1], b[0], b[-1], cut[0]]
    assert record.conversation("conv-3") == []


def test_events_of_kinds_come_oldest_first_across_turns(recorded: Recorded) -> None:
    late = camera_turn("late", [digest(1)], start="2026-11-30T09:00:00.000Z")
    early = camera_turn("early", [digest(2)], start="2026-11-30T08:00:00.000Z")
    record = recorded.turns(late, early)
    assert record.of_kinds(["TurnEnded", "TurnStarted"]) == [
        early[0], early[-1], late[0], late[-1]]
    assert record.of_kinds(["RequestSent"]) == [early[2], early[8], late[2], late[8]]
    assert record.of_kinds(["PlacementLearned"]) == []
    assert record.of_kinds([]) == []


def test_the_audit_is_the_fold_of_the_recorded_turns(recorded: Recorded) -> None:
    turns = [camera_turn("t1", [digest(1), digest(2)], delivered_at="2026-11-30T08:00:10.000Z"),
             camera_turn("t2", [digest(2, "ab")], wire="gemini", model="gemini-3-pro",
                         tool="nik__live_view_image", start="2026-11-30T09:00:00.000Z"),
             camera_turn("t3", [digest(3)], ended=False, start="2026-11-30T10:00:00.000Z")]
    session = read_stream(REPLAYS / "gateway-claude-desktop.jsonl")  # a gateway client's
    sent = [d for e in session if isinstance(e.event, ResultSent) for d in e.event.images]
    record = recorded.turns(*turns, session)
    folded = audit_rows(e for turn in [*turns, session] for e in turn)
    wheres = [AuditFilter(), AuditFilter(digest=digest(2)), AuditFilter(digest=digest(9)),
              AuditFilter(wire="gemini"), AuditFilter(model="claude-sonnet-5-5"),
              AuditFilter(tool="nik__live_view_image"),
              AuditFilter(since="2026-11-30T08:00:10.000Z"),
              AuditFilter(since="2026-11-30T09:00:00.000Z", wire="anthropic"),
              AuditFilter(client="claude-ai"), AuditFilter(client="claude-code"),
              AuditFilter(client="claude-ai", tool="shots__small"), AuditFilter(digest=sent[0])]
    for where in wheres:
        assert record.audit(where) == select(folded, where), where
    everything = record.audit(AuditFilter())
    assert [(d.turn_id, d.digest, d.turn_stop) for d in everything.deliveries] == [
        ("t1", digest(1), "answered"), ("t1", digest(2), "answered"),
        ("t2", digest(2, "ab"), "answered"), ("t3", digest(3), "cut")]
    assert [(d.session_id, d.call, d.tool, d.client, d.digest)
            for d in everything.client_deliveries] == [
        ("gateway-claude-desktop", 1, "shots__both", "claude-ai", sent[0]),
        ("gateway-claude-desktop", 1, "shots__both", "claude-ai", sent[1]),
        ("gateway-claude-desktop", 2, "shots__small", "claude-ai", sent[2])]
    assert record.audit(AuditFilter(client="claude-ai")).deliveries == []
    assert record.image_origins(digest(2)) == select(folded, AuditFilter(digest=digest(2))).origins
    assert [o.turn_id for o in record.image_origins(digest(2))] == ["t1"]
    assert record.image_deliveries(wire="gemini", tool="nik__live_view_image") == [
        everything.deliveries[2]]
    assert record.digests("") == sorted({digest(1), digest(2), digest(2, "ab"), digest(3),
                                         *sent})
    assert record.digests("ab") == [digest(2, "ab")]
    assert record.digests("ff") == []


V0_TURN = "p4-anthropic-ja"


def test_events_written_by_older_versions_are_read_upcast(recorded: Recorded) -> None:
    paths = [REPLAYS / "v0" / f"{V0_TURN}.jsonl", *sorted((REPLAYS / "v1").glob("*.jsonl"))]
    expected: dict[str, list[Envelope]] = {}
    for path in paths:
        expected.update(group_turns(read_stream(path)))
    assert len(expected) == 12
    record = recorded.lines(*paths)
    assert sorted(t.turn_id for t in record.turns()) == sorted(expected)
    for turn_id, events in expected.items():
        assert record.read(turn_id) == events
        assert record.read(turn_id, after=5) == events[5:]
    everything = [e for events in expected.values() for e in events]
    kinds = ["TurnStarted", "RequestRefused", "TurnEnded"]
    assert record.of_kinds(kinds) == sorted(
        (e for e in everything if e.kind in kinds), key=lambda e: (e.at, e.turn_id, e.seq))
    # The SQL stores' audit views read events of schema version 1 on (a version-0 tool call
    # named its tool differently); the version-0 turn's events are read upcast all the same.
    audited = [d for d in record.audit(AuditFilter()).deliveries if d.turn_id != V0_TURN]
    assert audited == [d for d in select(audit_rows(everything), AuditFilter()).deliveries
                       if d.turn_id != V0_TURN]
    assert len(audited) == 248


# --- the ordered record: PostgreSQL ---------------------------------------------------------------


@pytest.fixture(params=ORDERED)
def ordered_at(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where an ordered record lives: a store opened for writing there is one."""
    return target(request.param, request, tmp_path)


def test_an_ordered_record_is_followed_once_in_order_from_any_position(
        ordered_at: str | Path) -> None:
    t1 = sealed("t1", SAMPLES[:6])
    t2 = sealed("t2", SAMPLES[:4])
    with open_store(ordered_at) as store:
        store.append(t1[:3])
        store.append(t2)
        store.append(t1[3:])
    with open_record(ordered_at) as record:
        assert isinstance(record, OrderedRecord)
        seen: list[Envelope] = []
        at: Position | None = None
        while True:
            events, after = record.follow(at, limit=4)
            if not events:
                assert after == (at or Position())
                break
            assert at is None or after > at
            seen += events
            at = after
        assert seen == [*t1[:3], *t2, *t1[3:]]
        placed = record.follow_placed(None)
        assert [e for _, e in placed] == seen
        assert [p for p, _ in placed] == sorted(p for p, _ in placed)
        assert record.follow_placed(placed[2][0]) == placed[3:]
        assert record.follow_encoded(None) == [
            (p, e.turn_id, e.seq, encode_envelope(e)) for p, e in placed]


def test_an_ordered_record_keeps_one_identity(ordered_at: str | Path) -> None:
    with open_store(ordered_at) as store:
        assert isinstance(store, OrderedStore)
        identity = store.identity()
        assert len(identity) == 32 and store.identity() == identity
    with open_record(ordered_at) as again:
        assert isinstance(again, OrderedRecord)
        assert again.identity() == identity


# --- which backend claims which tier --------------------------------------------------------------


def test_each_backend_claims_its_tiers_and_no_more() -> None:
    claims = {kind: {tier.__name__ for tier in (TurnLog, Record, EventStore, OrderedRecord,
                                                OrderedStore) if issubclass(kind, tier)}
              for kind in (MemoryStore, SqliteStore, PostgresStore, StreamRecord)}
    assert claims == {
        MemoryStore: {"TurnLog", "Record", "EventStore"},
        SqliteStore: {"TurnLog", "Record", "EventStore"},
        PostgresStore: {"TurnLog", "Record", "EventStore", "OrderedRecord", "OrderedStore"},
        StreamRecord: {"Record"},
    }
    assert [kind for kind in RECORDS if kind not in ("memory", "sqlite", "postgres")] == ["stream"]
    assert ORDERED == ["postgres"]


def test_a_stream_refuses_an_append_and_stays_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "turn.jsonl"
    turn = sealed("t1", SAMPLES[:3])
    with open(path, "wb") as out:
        write_stream(turn, out)
    before = path.read_bytes()
    with open_record(path) as record:
        assert isinstance(record, StreamRecord) and not isinstance(record, TurnLog)
        with pytest.raises(StoreError) as caught:
            record.append(sealed("t1", SAMPLES[3:4], last_seq=3))  # type: ignore[attr-defined]
        assert str(caught.value) == (
            f"{path}: a JSON Lines stream is read-only; nothing was changed "
            f"(fuseforks import {path} --db STORE adds its turns to a store)")
        assert record.read("t1") == turn
    assert path.read_bytes() == before
