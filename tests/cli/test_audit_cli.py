"""`fuseforks audit` filters that work the same on a store (SQL) and on a stream (the fold):
times compared as instants, a digest by a unique prefix in any case, wires by name."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.projections.audit import since_key
from tests.cli.crafted import camera_turn, make_store, write_jsonl

DA = "abcd" + "0" * 60
DB = "abcd" + "1" * 60
DC = "ef01" + "2" * 60


def turns() -> list[list]:
    return [
        camera_turn("before", [DC], start="2026-11-30T08:40:00.000Z",
                    delivered_at="2026-11-30T08:48:53.999Z"),
        camera_turn("exact", [DA], start="2026-11-30T08:41:00.000Z",
                    delivered_at="2026-11-30T08:48:54.057Z"),
        camera_turn("later", [DB], start="2026-11-30T08:42:00.000Z",
                    delivered_at="2026-11-30T09:30:00.000Z", wire="gemini",
                    model="gemini-3.8-flash", tool="eye__look"),
    ]


@pytest.fixture(params=["store", "stream"])
def source(request, tmp_path: Path) -> Path:
    if request.param == "store":
        return make_store(tmp_path / "audit.db", *turns())
    return write_jsonl(tmp_path / "audit.jsonl", [e for t in turns() for e in t])


def audit(source: Path, *args: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(main, ["audit", str(source), "--json", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def delivered(source: Path, *args: str) -> list[str]:
    code, rows, stderr = audit(source, *args)
    assert (code, stderr) == (0, "")
    return [row["turn_id"] for row in rows["deliveries"]]


@pytest.mark.parametrize(("since", "expected"), [
    ("2026-11-30T08:48:54Z", ["exact", "later"]),
    ("2026-11-30T09:48:54+01:00", ["exact", "later"]),
    ("2026-11-30T03:48:54-05:00", ["exact", "later"]),
    ("2026-11-30T08:48:54.057Z", ["exact", "later"]),
    ("2026-11-30T08:48:54.0571Z", ["later"]),
    ("2026-11-30T08:48:54.058", ["later"]),
    ("2026-11-30 10:00+01:00", ["later"]),
    ("2026-11-30", ["before", "exact", "later"]),
    ("2026-11-30T09:30:00.001Z", []),
])
def test_since_compares_instants_with_any_offset(source: Path, since: str,
                                                 expected: list[str]) -> None:
    assert delivered(source, "--since", since) == expected


@pytest.mark.parametrize(("window", "expected"), [
    (["--until", "2026-11-30T08:48:54.057Z"], ["before"]),  # until is exclusive
    (["--until", "2026-11-30T08:48:54.058Z"], ["before", "exact"]),
    (["--since", "2026-11-30T08:48:54Z", "--until", "2026-11-30T09:00+00:00"], ["exact"]),
    (["--outcome", "received"], ["before", "exact", "later"]),
    (["--outcome", "refused"], []),
])
def test_until_and_outcome_narrow_as_on_the_console(source: Path, window: list[str],
                                                     expected: list[str]) -> None:
    assert delivered(source, *window) == expected


def test_since_a_duration_means_that_long_ago(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    old, recent = (since_key(now - timedelta(hours=h)) for h in (3, 1))
    both = [camera_turn("old", [DA], start=old, delivered_at=old),
            camera_turn("recent", [DB], start=recent, delivered_at=recent)]
    for source in (make_store(tmp_path / "d.db", *both),
                   write_jsonl(tmp_path / "d.jsonl", [e for t in both for e in t])):
        assert delivered(source, "--since", "2h") == ["recent"]
        assert delivered(source, "--since", "7d") == ["old", "recent"]
        assert delivered(source, "--since", "150m") == ["recent"]
        assert delivered(source, "--since", "30m") == []
        assert delivered(source, "--since", "1w") == ["old", "recent"]


def test_a_digest_prefix_in_any_case_finds_its_image(source: Path) -> None:
    code, rows, stderr = audit(source, "--digest", "ABCD0")
    assert (code, stderr) == (0, "")
    assert [(o["digest"], o["turn_id"], o["tool"]) for o in rows["origins"]] == [
        (DA, "exact", "cam__shot")]
    assert [(d["digest"], d["turn_id"]) for d in rows["deliveries"]] == [(DA, "exact")]
    assert delivered(source, "--digest", DB.upper()) == ["later"]
    assert audit(source, "--digest", "9999") == (0, {"origins": [], "deliveries": []}, "")


def test_an_ambiguous_digest_lists_the_candidates(source: Path) -> None:
    result = CliRunner().invoke(main, ["audit", str(source), "--digest", "AbCd"])
    assert (result.exit_code, result.stdout, result.stderr.splitlines()) == (1, "", [
        f"Error: {source}: digest 'abcd' is ambiguous: 2 images begin with it: {DA}, {DB}"])


def test_provider_model_and_tool_filters(source: Path) -> None:
    assert delivered(source, "--provider", "gemini") == ["later"]
    assert delivered(source, "--provider", "anthropic", "--since", "2026-11-30T08:48:54Z") == [
        "exact"]
    assert delivered(source, "--model", "gemini-3.8-flash") == ["later"]
    assert delivered(source, "--tool", "cam__shot") == ["before", "exact"]


def test_the_text_lines(source: Path) -> None:
    result = CliRunner().invoke(main, ["audit", str(source), "--digest", "ef01"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        f"origin {DC}: tool cam__shot (server cam) round 1 of turn before at "
        "2026-11-30T08:40:00.000Z; JPEG -> image/jpeg pass_through 64x48 1000 B",
        f"2026-11-30T08:48:53.999Z {DC} cam__shot -> anthropic claude-sonnet-5-5 host=127.0.0.1 "
        "native round=2 round received turn=before",
    ]
    nothing = CliRunner().invoke(main, ["audit", str(source), "--since", "2027-01-01"])
    assert (nothing.exit_code, nothing.stdout) == (0, "no image matches\n")
