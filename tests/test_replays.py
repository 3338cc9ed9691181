"""Every stream in replays/ replays to its log and verifies against today's engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.engine.replay import verify
from fuseforks.events.codec import SCHEMA_VERSION
from fuseforks.events.types import ImagesCapped, ResponseReceived, ToolCalled, TurnStarted
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.stores.jsonl import read_stream

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
STREAMS = sorted(REPLAYS.rglob("*.jsonl"))


def test_the_replays_cover_the_p4_table_the_cap_the_repeat_drops_and_version_0() -> None:
    names = {p.relative_to(REPLAYS).as_posix() for p in STREAMS}
    assert {f"p4-{n}.jsonl" for n in ("meta", "anthropic", "gemini", "openai-responses",
                                       "openai-compat", "xai", "perplexity",
                                       "image-refusing", "bedrock", "bedrock-pixtral",
                                       "vertex-gemini", "vertex-claude", "azure-chat",
                                       "azure-responses", "ollama", "vllm", "llamacpp",
                                       "lmstudio")} <= names
    assert {"cap-at-20.jsonl", "repeat-stop.jsonl", "dropped-every-reason.jsonl",
            "v0/p4-anthropic-ja.jsonl", "v1/p4-anthropic.jsonl", "v1/repeat-stop.jsonl",
            "v2/p4-image-refusing.jsonl", "v2/cap-at-20.jsonl", "v3/p4-image-refusing.jsonl",
            "v3/cap-at-20.jsonl", "gateway-claude-desktop.jsonl"} <= names
    versions = {json.loads(line)["version"] for p in STREAMS for line in p.read_text().splitlines()}
    assert versions == {0, 1, 2, 3, SCHEMA_VERSION}


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: p.relative_to(REPLAYS).as_posix())
def test_stream_replays_to_its_log(stream: Path) -> None:
    expected = stream.with_suffix(".log").read_text().splitlines()
    assert list(fold(evolve_log, LogState(), read_stream(stream)).lines) == expected


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: p.relative_to(REPLAYS).as_posix())
async def test_stream_verifies_against_todays_engine(stream: Path) -> None:
    verification = await verify(read_stream(stream))
    assert verification.divergence is None
    assert verification.produced == verification.recorded and not verification.interrupted


def test_dropped_stream_has_every_reason() -> None:
    log = (REPLAYS / "dropped-every-reason.log").read_text()
    for reason in ("unreadable", "unsupported_format", "too_large", "too_many"):
        assert f"reason={reason}\n" in log


def edited(tmp_path: Path, name: str, kind: str, old: str, new: str) -> Path:
    lines = (REPLAYS / name).read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if f'"kind":"{kind}"' in line and old in line)
    lines[index] = lines[index].replace(old, new, 1)
    copy = tmp_path / name
    copy.write_text("".join(lines))
    return copy


async def test_a_changed_recorded_response_fails_verify_at_the_first_divergence(tmp_path) -> None:
    copy = edited(tmp_path, "p4-anthropic.jsonl", "ResponseReceived",
                  '"name":"nik__live_view_image"', '"name":"nik__camera_status"')
    verification = await verify(read_stream(copy))
    assert verification.divergence is not None
    expected, produced = verification.divergence.expected, verification.divergence.produced
    assert isinstance(expected, ToolCalled) and isinstance(produced, ToolCalled)
    assert (expected.name, produced.name) == ("nik__live_view_image", "nik__camera_status")
    recorded = read_stream(copy)
    first_call = next(e.seq for e in recorded if isinstance(e.event, ToolCalled))
    assert verification.divergence.seq == first_call
    assert isinstance(recorded[first_call - 2].event, ResponseReceived)


def test_the_replay_cli_exits_1_and_names_the_divergence(tmp_path) -> None:
    copy = edited(tmp_path, "p4-anthropic.jsonl", "ResponseReceived",
                  '"name":"nik__live_view_image"', '"name":"nik__camera_status"')
    first_call = next(e.seq for e in read_stream(copy) if isinstance(e.event, ToolCalled))
    result = CliRunner().invoke(main, ["replay", str(copy), "--verify"])
    assert result.exit_code == 1
    assert (f'verify: DIVERGED at seq {first_call}: expected {{"kind":"ToolCalled","round":1,'
            in result.output)


async def test_a_changed_cap_shows_where_images_capped_no_longer_matches(tmp_path) -> None:
    copy = edited(tmp_path, "cap-at-20.jsonl", "TurnStarted", '"image_cap":20', '"image_cap":19')
    recorded = read_stream(copy)
    started = recorded[0].event
    assert isinstance(started, TurnStarted) and started.image_cap == 19
    verification = await verify(recorded)
    divergence = verification.divergence
    assert divergence is not None
    assert isinstance(divergence.produced, ImagesCapped)
    assert (divergence.produced.round, divergence.produced.kept) == (20, 19)


async def test_an_interrupted_turn_replays_as_far_as_it_goes(tmp_path) -> None:
    lines = (REPLAYS / "p4-gemini.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:7]))
    verification = await verify(read_stream(cut))
    assert verification.interrupted and verification.divergence is None


def test_the_replay_cli_says_a_turn_was_interrupted(tmp_path) -> None:
    lines = (REPLAYS / "p4-gemini.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:7]))
    result = CliRunner().invoke(main, ["replay", str(cut), "--verify"])
    assert result.exit_code == 0
    assert "interrupted: no TurnEnded, replayed up to the last recorded event" in result.output


def test_replay_cli_verifies_every_stream() -> None:
    for stream in STREAMS:
        result = CliRunner().invoke(main, ["replay", str(stream), "--verify", "--json"])
        assert result.exit_code == 0, (stream, result.output[-500:])
        (report,) = json.loads(result.output)
        assert report["verify"]["divergence"] is None
        assert report["log"] == stream.with_suffix(".log").read_text().splitlines()
