"""`fuseforks replay`: the answer and token usage of each turn, and --verify on a damaged recording
naming where it is broken instead of failing with a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.events.types import RoundStarted, TurnEnded
from tests.cli.crafted import REPLAYS, camera_turn, digest, write_jsonl


def replay(*args: str) -> tuple[int, list[str], list[str]]:
    result = CliRunner().invoke(main, ["replay", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout.splitlines(), result.stderr.splitlines()


def test_the_answer_and_the_tokens_of_each_turn() -> None:
    code, lines, errors = replay(str(REPLAYS / "p4-anthropic.jsonl"))
    assert (code, errors) == (0, [])
    assert lines[:3] == [
        "turn p4-anthropic (12 events; stop=answered)",
        "  answer: 'I see 1 image. image 1: left half red, right half green.'",
        "  usage: input=203 output=20 cache_read=0 cache_write=0 (2 responses)",
    ]
    code, lines, errors = replay(str(REPLAYS / "p4-anthropic.jsonl"), "--json")
    (report,) = json.loads("\n".join(lines))
    assert (report["answer"], report["error"], report["usage"]) == (
        "I see 1 image. image 1: left half red, right half green.", None,
        {"responses": 2, "input_tokens": 203, "output_tokens": 20, "cache_read_tokens": 0,
         "cache_write_tokens": 0})


def test_a_cut_turn_has_no_answer_but_its_tokens(tmp_path: Path) -> None:
    stream = write_jsonl(tmp_path / "cut.jsonl", camera_turn("t1", [digest(1)], ended=False))
    code, lines, errors = replay(str(stream))
    assert (code, errors) == (0, [])
    assert lines[:3] == [
        "turn t1 (10 events; interrupted: no TurnEnded, replayed up to the last recorded event)",
        "  answer: none",
        "  usage: input=300 output=16 cache_read=50 cache_write=0 (2 responses)",
    ]


def test_a_failed_turn_shows_its_error(tmp_path: Path) -> None:
    turn = camera_turn("t1", [digest(1)])
    turn[-1] = msgspec.structs.replace(turn[-1], event=TurnEnded(
        rounds=2, stop="error", error="WireRejected: backend=anthropic status=404"))
    stream = write_jsonl(tmp_path / "failed.jsonl", turn)
    code, lines, errors = replay(str(stream))
    assert (code, errors) == (0, [])
    assert lines[:4] == [
        "turn t1 (11 events; stop=error)",
        "  answer: none",
        "  error: WireRejected: backend=anthropic status=404",
        "  usage: input=300 output=16 cache_read=50 cache_write=0 (2 responses)",
    ]


STREAMS = sorted(REPLAYS.glob("*.jsonl"))


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: p.name)
def test_every_event_removed_in_turn_is_the_first_divergence(stream: Path, tmp_path: Path) -> None:
    lines = stream.read_bytes().splitlines(keepends=True)
    turn_id = json.loads(lines[0])["turn_id"]
    damaged = tmp_path / stream.name
    for index in range(len(lines)):
        damaged.write_bytes(b"".join(lines[:index] + lines[index + 1:]))
        code, out, errors = replay(str(damaged), "--verify")
        if index == len(lines) - 1:  # without its TurnEnded the recording is a cut one
            assert (code, out[-1], errors) == (
                0, f"  verify: identical ({index} events) (the recording was interrupted; the "
                   "engine matches it as far as it goes)", [])
            continue
        seq = index + 1
        gap = (f"seq {seq - 1} is followed by seq {seq + 1}" if seq > 1
               else "it starts at seq 2")
        assert (code, errors) == (
            1, [f"Error: 1 of 1 turns diverged from today's engine: {turn_id}"]), index
        if out[-1].startswith(f"  verify: DIVERGED at seq {seq}: the recording has no event "):
            assert out[-1].startswith(
                f"  verify: DIVERGED at seq {seq}: the recording has no event {seq}: {gap}; "
                "produced "), (index, out[-1])
        else:  # the engine, fed by the events after the gap, already differs before it
            earlier = re.match(r"  verify: DIVERGED at seq (\d+): expected ", out[-1])
            assert earlier is not None and int(earlier.group(1)) < seq, (index, out[-1])
            assert out[-1].endswith(f"; the recording also has no event {seq}: {gap}"), index


def test_a_recording_that_does_not_begin_with_turn_started(tmp_path: Path) -> None:
    turn = camera_turn("t1", [digest(1)])
    turn[0] = msgspec.structs.replace(turn[0], event=RoundStarted(round=0))
    stream = write_jsonl(tmp_path / "odd.jsonl", turn)
    code, out, errors = replay(str(stream), "--verify")
    assert (code, out[-1], errors) == (
        1, "  verify: DIVERGED at seq 1: the recording begins with RoundStarted, not TurnStarted: "
           "today's engine cannot re-drive it; produced nothing",
        ["Error: 1 of 1 turns diverged from today's engine: t1"])


def test_a_divergence_before_a_gap_is_the_first_one(tmp_path: Path) -> None:
    lines = (REPLAYS / "p4-anthropic.jsonl").read_text().splitlines(keepends=True)
    edited = [line.replace('"name":"nik__live_view_image"', '"name":"nik__camera_status"', 1)
              if '"kind":"ResponseReceived"' in line and '"round":1' in line else line
              for line in lines]
    assert edited != lines
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(edited[:7] + edited[8:]))  # and seq 8 removed
    code, out, errors = replay(str(damaged), "--verify")
    assert (code, errors) == (1, ["Error: 1 of 1 turns diverged from today's engine: p4-anthropic"])
    assert out[-1] == (
        '  verify: DIVERGED at seq 5: expected {"kind":"ToolCalled","round":1,'
        '"call_id":"toolu_0001_0","server":"nik","name":"nik__live_view_image","arguments":"{}"}, '
        'produced {"kind":"ToolCalled","round":1,"call_id":"toolu_0001_0",'
        '"name":"nik__camera_status","arguments":"{}"}; the recording also has no event 8: '
        'seq 7 is followed by seq 9')
