"""A stream whose last line was cut short (its writer stopped mid-line) is read as far as its whole
lines go, by every command that reads turns: each says so once on stderr, naming the cut line, and
shows exactly what the stream without that line shows — the cut turn as cut. A bad line anywhere
else stays an error."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from fuseforks.cli import main
from fuseforks.events.codec import Envelope
from fuseforks.stores.jsonl import read_stream
from tests.cli.crafted import write_jsonl
from tests.console.servers import start, stop

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
TURNS = ("p4-anthropic", "p4-gemini", "p4-xai", "p4-image-refusing", "gateway-claude-desktop")


class Streams:
    def __init__(self, folder: Path) -> None:
        envelopes: list[Envelope] = []
        for name in TURNS:
            envelopes += read_stream(REPLAYS / f"{name}.jsonl")
        self.events = len(envelopes)
        full = write_jsonl(folder / "full.jsonl", envelopes).read_bytes()
        lines = full.splitlines(keepends=True)
        self.whole = folder / "whole.jsonl"  # the stream without its last line
        self.whole.write_bytes(b"".join(lines[:-1]))
        self.cut = folder / "cut.jsonl"  # the last line cut in its middle, no newline
        self.cut.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
        self.warning = (f"warning: {self.cut}:{len(lines)}: the last line is cut short (its "
                        f"writer stopped mid-line) and is left out; the {len(lines) - 1:,} "
                        "events before it are read\n")


@pytest.fixture
def streams(tmp_path: Path) -> Streams:
    return Streams(tmp_path)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


READERS = [
    ["turns"], ["turns", "--json"], ["replay"], ["replay", "--verify"], ["replay", "--json"],
    ["audit"], ["audit", "--json"], ["log"], ["capabilities"],
]


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_reader_shows_what_the_whole_lines_hold_and_warns_once(streams: Streams,
                                                                  command: list[str]) -> None:
    expected = invoke(command[0], str(streams.whole), *command[1:])
    result = invoke(command[0], str(streams.cut), *command[1:])
    assert (result.exit_code, result.stderr) == (expected.exit_code, streams.warning)
    assert result.stdout.replace(str(streams.cut), str(streams.whole)) == expected.stdout
    assert expected.exit_code == 0, expected.output


def test_the_cut_turn_is_listed_as_cut_after_the_whole_ones(streams: Streams) -> None:
    result = invoke("turns", str(streams.cut), "--json")
    listed = json.loads(result.stdout)
    assert len(listed) == len(TURNS)
    stops = [turn["stop"] for turn in listed]
    assert stops.count("cut") == 1
    whole = json.loads(invoke("turns", str(REPLAYS / f"{TURNS[-1]}.jsonl"), "--json").stdout)
    assert [t["stop"] for t in listed if t["turn_id"] == whole[0]["turn_id"]] == ["cut"]
    assert whole[0]["stop"] != "cut"


def test_an_import_takes_the_whole_lines_and_warns(streams: Streams, tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    result = invoke("import", str(streams.cut), "--db", str(store))
    assert (result.exit_code, result.stderr) == (0, streams.warning)
    assert invoke("turns", str(store)).stdout == invoke("turns", str(streams.whole)).stdout
    # The whole stream, imported after, completes the cut turn and skips the rest.
    full = tmp_path / "full.jsonl"
    again = invoke("import", str(full), "--db", str(store))
    assert (again.exit_code, again.stderr) == (0, "")
    assert invoke("turns", str(store)).stdout == invoke("turns", str(full)).stdout


def test_the_console_says_it_on_stderr_and_on_every_page(streams: Streams) -> None:
    console, url = start(str(streams.cut))
    try:
        pages = [httpx.get(url.rstrip("/") + path, timeout=30) for path in ("/", "/audit")]
    finally:
        code, _, errors = stop(console)
    assert (code, errors) == (0, streams.warning)
    said = streams.warning.removeprefix("warning: ").strip()
    for page in pages:
        assert page.status_code == 200
        notices = re.findall(r'<p class="notice" role="status">(.*?)</p>', page.text)
        assert [unescape(n) for n in notices] == [said]


def test_a_bad_line_in_the_middle_stays_an_error(tmp_path: Path) -> None:
    lines = (REPLAYS / "p4-anthropic.jsonl").read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:3]) + lines[3][:40] + b"\n" + b"".join(lines[4:]))
    for command in ("turns", "replay", "audit", "import"):
        result = invoke(command, str(bad), *(["--db", str(tmp_path / "s.db")]
                                             if command == "import" else []))
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: {bad}:4: unreadable line: ")
        assert result.stdout == ""
    assert not (tmp_path / "s.db").exists()
