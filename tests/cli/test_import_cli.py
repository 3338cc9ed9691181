"""`fuseforks import` as a user meets it: twice in a row, over a store that already holds some of
the turns, with a conflicting event, with a gap — and what it says each time."""

from __future__ import annotations

from pathlib import Path

import msgspec
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.events.types import TurnEnded
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import camera_turn, digest, make_store, write_jsonl


def five_turns() -> list[list]:
    return [camera_turn(f"t{i}", [digest(i)], start=f"2026-11-30T0{i}:00:00.000Z")
            for i in range(1, 6)]


def invoke(*args: str) -> tuple[int, list[str], list[str]]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout.splitlines(), result.stderr.splitlines()


def stored(db: Path) -> dict[str, int]:
    with SqliteStore(db, read_only=True) as store:
        return {t.turn_id: t.events for t in store.turns()}


def test_importing_the_same_stream_twice_says_it_skipped_everything(tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "all.jsonl", [e for t in five_turns() for e in t])
    db = tmp_path / "archive.db"
    assert invoke("import", str(stream), "--db", str(db)) == (0, [
        *(f"imported t{i}: events 1-11" for i in range(1, 6)),
        f"{db}: 5 turns imported (55 events), 0 skipped (already there), 0 refused"], [])
    assert invoke("import", str(stream), "--db", str(db)) == (0, [
        *(f"skipped t{i}: already in the store (events 1-11, identical)" for i in range(1, 6)),
        f"{db}: 0 turns imported (0 events), 5 skipped (already there), 0 refused"], [])
    assert stored(db) == {f"t{i}": 11 for i in range(1, 6)}


def test_a_stream_whose_fifth_turn_is_there_imports_four_and_skips_it(tmp_path: Path) -> None:
    turns = five_turns()
    db = make_store(tmp_path / "archive.db", turns[4])
    stream = write_jsonl(tmp_path / "all.jsonl", [e for t in turns for e in t])
    assert invoke("import", str(stream), "--db", str(db)) == (0, [
        *(f"imported t{i}: events 1-11" for i in range(1, 5)),
        "skipped t5: already in the store (events 1-11, identical)",
        f"{db}: 4 turns imported (44 events), 1 skipped (already there), 0 refused"], [])


def test_a_conflicting_fifth_turn_is_refused_and_the_report_says_what_was_written(
        tmp_path: Path) -> None:
    turns = five_turns()
    db = make_store(tmp_path / "archive.db", turns[4])
    other = msgspec.structs.replace(turns[4][-1], event=TurnEnded(
        rounds=2, stop="answered", answer="Nothing to see."))
    stream = write_jsonl(tmp_path / "all.jsonl",
                         [e for t in turns[:4] for e in t] + [*turns[4][:-1], other])
    assert invoke("import", str(stream), "--db", str(db)) == (1, [
        *(f"imported t{i}: events 1-11" for i in range(1, 5)),
        'refused t5: conflict at seq 11: the store has TurnEnded, the stream has TurnEnded; '
        'answer: store "I see it.", stream "Nothing to see."',
        f"{db}: 4 turns imported (44 events), 0 skipped (already there), 1 refused"],
        ["Error: 1 of 5 turns refused, nothing of them was written: t5"])
    assert stored(db) == {f"t{i}": 11 for i in range(1, 6)}


def test_a_gap_is_named_where_it_is_and_blames_no_other_writer(tmp_path: Path) -> None:
    turns = five_turns()
    db = tmp_path / "archive.db"
    stream = write_jsonl(tmp_path / "gap.jsonl",
                         [*turns[0], *turns[1][:6], *turns[1][7:], *turns[2]])
    assert invoke("import", str(stream), "--db", str(db)) == (1, [
        "imported t1: events 1-11",
        "refused t2: gap in the stream at turn t2 seq 7 (seq 6 is followed by seq 8)",
        "imported t3: events 1-11",
        f"{db}: 2 turns imported (22 events), 0 skipped (already there), 1 refused"],
        ["Error: 1 of 3 turns refused, nothing of them was written: t2"])
    assert stored(db) == {"t1": 11, "t3": 11}


def test_the_rest_of_a_cut_turn_is_added_and_said_so(tmp_path: Path) -> None:
    turn = camera_turn("t1", [digest(1)])
    db = make_store(tmp_path / "archive.db", turn[:4])
    stream = write_jsonl(tmp_path / "t1.jsonl", turn)
    assert invoke("import", str(stream), "--db", str(db)) == (0, [
        "imported t1: events 5-11 (events 1-4 were already there, identical)",
        f"{db}: 1 turn imported (7 events), 0 skipped (already there), 0 refused"], [])


def test_an_empty_stream_creates_no_store(tmp_path: Path) -> None:
    stream = tmp_path / "empty.jsonl"
    stream.write_text("")
    assert invoke("import", str(stream), "--db", str(tmp_path / "x.db")) == (
        0, [f"{stream}: no turns to import"], [])
    assert not (tmp_path / "x.db").exists()
