"""Importing a stream into a store, on every store that is a turn log: idempotent,
all-or-nothing per turn, and a report that says what happened to each turn."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from fuseforks.events.codec import Envelope
from fuseforks.events.types import RoundStarted, TurnEnded
from fuseforks.stores.jsonl import TurnImport, import_turns
from fuseforks.stores.store import EventStore
from tests.cli.crafted import camera_turn, digest, write_jsonl
from tests.helpers.streams import import_stream


@pytest.fixture
def store(log: EventStore) -> EventStore:
    """Each store that claims the turn log (`tests.stores.conftest`): an import needs no more."""
    return log


def five_turns() -> list[list[Envelope]]:
    return [camera_turn(f"t{i}", [digest(i)], start=f"2026-11-30T0{i}:00:00.000Z")
            for i in range(1, 6)]


def everything(store: EventStore) -> dict[str, list[Envelope]]:
    return {t.turn_id: store.read(t.turn_id) for t in store.turns()}


def test_the_same_stream_twice_imports_once_then_skips(store, tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "all.jsonl", [e for t in five_turns() for e in t])
    assert import_stream(store, stream) == [
        TurnImport(turn_id=f"t{i}", outcome="imported", added=(1, 11)) for i in range(1, 6)]
    kept = everything(store)
    assert import_stream(store, stream) == [
        TurnImport(turn_id=f"t{i}", outcome="skipped", present=(1, 11)) for i in range(1, 6)]
    assert everything(store) == kept


def test_a_stream_whose_fifth_turn_is_already_there_imports_the_other_four(store) -> None:
    turns = five_turns()
    store.append(turns[4])
    outcomes = list(import_turns(store, [e for t in turns for e in t]))
    assert [(o.turn_id, o.outcome, o.added, o.present) for o in outcomes] == [
        ("t1", "imported", (1, 11), None), ("t2", "imported", (1, 11), None),
        ("t3", "imported", (1, 11), None), ("t4", "imported", (1, 11), None),
        ("t5", "skipped", None, (1, 11))]
    assert everything(store) == {t[0].turn_id: t for t in turns}


def test_a_conflicting_event_refuses_its_turn_whole_and_names_both_versions(store) -> None:
    turns = five_turns()
    store.append(turns[4][:6])  # the fifth turn, cut after its ImagesNormalized
    changed = list(turns[4])
    changed[3] = msgspec.structs.replace(changed[3], at="2026-11-30T05:00:00.031Z")
    changed[5] = msgspec.structs.replace(changed[5], event=RoundStarted(round=1))
    outcomes = list(import_turns(store, [e for t in [*turns[:4], changed] for e in t]))
    assert [o.outcome for o in outcomes] == ["imported"] * 4 + ["refused"]
    assert outcomes[4].reason == (
        "conflict at seq 4: the store has ResponseReceived, the stream has ResponseReceived; "
        'at: store "2026-11-30T05:00:00.000Z", stream "2026-11-30T05:00:00.031Z"')
    assert store.read("t5") == turns[4][:6]
    changed[3] = turns[4][3]
    (outcome,) = import_turns(store, changed)
    assert outcome.reason == ("conflict at seq 6: the store has ImagesNormalized, the stream has "
                              "RoundStarted")
    answer = msgspec.structs.replace(turns[4][-1], event=TurnEnded(rounds=3, stop="answered",
                                                                   answer="I see two."))
    store.append(turns[4][6:])
    (outcome,) = import_turns(store, [*turns[4][:-1], answer])
    assert outcome == TurnImport(turn_id="t5", outcome="refused", reason=(
        "conflict at seq 11: the store has TurnEnded, the stream has TurnEnded; rounds: store 2, "
        'stream 3; answer: store "I see it.", stream "I see two."'))
    assert store.read("t5") == turns[4]


def test_a_gap_in_the_stream_is_named_and_its_turn_refused(store) -> None:
    turns = five_turns()
    gapped = turns[1][:5] + turns[1][6:]
    outcomes = list(import_turns(store, [*turns[0], *gapped, *turns[2]]))
    assert [(o.turn_id, o.outcome, o.reason) for o in outcomes] == [
        ("t1", "imported", ""),
        ("t2", "refused", "gap in the stream at turn t2 seq 6 (seq 5 is followed by seq 7)"),
        ("t3", "imported", "")]
    assert store.read("t2") == []


def test_a_stream_that_continues_a_cut_turn_adds_only_the_rest(store) -> None:
    turn = camera_turn("t1", [digest(1)])
    store.append(turn[:4])
    (whole,) = import_turns(store, turn)
    assert whole == TurnImport(turn_id="t1", outcome="imported", added=(5, 11), present=(1, 4))
    assert store.read("t1") == turn


def test_a_stream_holding_only_a_turns_tail(store) -> None:
    turn = camera_turn("t1", [digest(1)])
    store.append(turn[:4])
    (late,) = import_turns(store, turn[6:])
    assert late == TurnImport(turn_id="t1", outcome="refused", reason=(
        "gap in the stream at turn t1 seq 5 (the stream starts at seq 7; the store holds seq 1-4)"))
    (tail,) = import_turns(store, turn[4:])
    assert tail == TurnImport(turn_id="t1", outcome="imported", added=(5, 11))
    (unknown,) = import_turns(store, camera_turn("t2", [digest(2)])[2:])
    assert unknown.reason == ("gap in the stream at turn t2 seq 1 (the stream starts at seq 3; "
                              "the store has none of this turn)")
    assert store.read("t2") == []


def test_a_repeated_seq_in_the_stream_is_refused(store) -> None:
    turn = camera_turn("t1", [digest(1)])
    (outcome,) = import_turns(store, [*turn[:3], turn[2], *turn[3:]])
    assert outcome.reason == "seq 3 comes after seq 3 in the stream (out of order or repeated)"
    assert store.read("t1") == []
