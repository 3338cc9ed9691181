"""`fuseforks turns`: the recorded turns, one line each; and every --turn option takes a unique
prefix of a turn id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import TurnTakenOver
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import REPLAYS, camera_turn, digest, make_store, write_jsonl
from tests.helpers.streams import import_stream


def invoke(*args: str) -> tuple[int, list[str], list[str]]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout.splitlines(), result.stderr.splitlines()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "fuseforks.db"
    with SqliteStore(path) as opened:
        for name in ("p4-gemini", "p4-image-refusing", "repeat-stop"):
            import_stream(opened, REPLAYS / f"{name}.jsonl")
        opened.append(camera_turn("7f3e2d1c-cut", [digest(3), digest(4)],
                                  start="2026-12-01T10:00:00.000Z", ended=False))
        opened.append(taken_over_twice("b0c1-taken", start="2026-12-01T11:00:00.000Z"))
    return path


def taken_over_twice(turn_id: str, start: str) -> list[Envelope]:
    """A camera turn whose request of round 2 was left unanswered twice: taken over by w2 from
    w1, then by w3 from w2, which sent it again and got the answer."""
    sent = camera_turn(turn_id, [digest(5)], start=start)
    request, answer, end = (e.event for e in sent[8:])
    events = [e.event for e in sent[:9]]
    for worker, before in (("w2", "w1"), ("w3", "w2")):
        events += [TurnTakenOver(round=2, worker=worker, endpoint_host="127.0.0.1",
                                 images_lost=[digest(5)], taken_from=before), request]
    return Sequencer(turn_id, FixedClock(start), 0).seal([*events, answer, end])


def test_a_table_of_the_turns(store: Path) -> None:
    assert invoke("turns", str(store)) == (0, [
        "turn               agent      wire                  model                            "
        "started                   rounds  stop      images sent                 taken over",
        "p4-gemini          replay     gemini                gemini-3.8-flash                 "
        "2026-11-30T00:00:00.000Z       2  answered  1                                    0",
        "p4-image-refusing  replay     perplexity-responses  perplexity/deepseek-v4-pro-0813  "
        "2026-11-30T00:00:00.000Z       2  answered  1 (refused 2×, 1 stripped)           0",
        "repeat-stop        replay     gemini                gemini-3.8-flash                 "
        "2026-11-30T00:00:00.000Z       3  repeat    3                                    0",
        "7f3e2d1c-cut       cam_agent  anthropic             claude-sonnet-5-5                "
        "2026-12-01T10:00:00.000Z       2  cut       2                                    0",
        "b0c1-taken         cam_agent  anthropic             claude-sonnet-5-5                "
        "2026-12-01T11:00:00.000Z       2  answered  1                                    2",
    ], [])


def test_the_turns_as_json(tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "one.jsonl", camera_turn("t1", [digest(1)], ended=False))
    code, lines, errors = invoke("turns", str(stream), "--json")
    assert (code, errors) == (0, [])
    assert json.loads("\n".join(lines)) == [{
        "turn_id": "t1", "agent": "cam_agent", "wire": "anthropic", "model": "claude-sonnet-5-5",
        "started": "2026-11-30T08:00:00.000Z", "rounds": 2, "stop": "cut", "images_sent": 1,
        "images_received": 1, "refusals": 0, "stripped": 0, "events": 10, "taken_over": 0,
        "conversation": ""}]


def test_no_turns(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    SqliteStore(empty).close()
    assert invoke("turns", str(empty)) == (0, [f"no turns in {empty}"], [])
    assert invoke("turns", str(empty), "--json") == (0, ["[]"], [])


@pytest.mark.parametrize("command", [["log"], ["replay", "--json"], ["export"]])
def test_every_turn_option_takes_a_unique_prefix(store: Path, command: list[str]) -> None:
    by_id = CliRunner().invoke(main, [*command, str(store), "--turn", "7f3e2d1c-cut"])
    by_prefix = CliRunner().invoke(main, [*command, str(store), "--turn", "7f3"])
    assert (by_prefix.exit_code, by_prefix.stdout, by_prefix.stderr) == (
        0, by_id.stdout, by_id.stderr if command != ["export"] else "")
    assert by_id.stdout != ""


def test_an_exact_id_wins_over_longer_ids_it_begins(tmp_path: Path) -> None:
    turns = [camera_turn(turn_id, [digest(i + 1)], start=f"2026-11-30T0{i}:00:00.000Z")
             for i, turn_id in enumerate(["t1", "t10", "t11"])]
    store = make_store(tmp_path / "s.db", *turns)
    code, lines, _ = invoke("replay", str(store), "--turn", "t1")
    assert (code, lines[0]) == (0, "turn t1 (11 events; stop=answered)")
    assert invoke("log", str(store), "--turn", "t10") == (0, [
        "tool: agent=cam_agent round=1 name=cam__shot ok=true body_chars=7 images=1",
        "turn: agent=cam_agent backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=answered"], [])


def test_many_candidates_are_listed_up_to_ten(tmp_path: Path) -> None:
    turns = [camera_turn(f"run-{i:02d}", [digest(1)], start=f"2026-11-30T{i:02d}:00:00.000Z")
             for i in range(12)]
    store = make_store(tmp_path / "s.db", *turns)
    assert invoke("log", str(store), "--turn", "run-") == (1, [], [
        f"Error: {store}: turn 'run-' is ambiguous: 12 turns begin with it: "
        + ", ".join(f"run-{i:02d}" for i in range(10)) + " and 2 more"])
