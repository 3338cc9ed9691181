"""`fuseforks run` as a user runs it: a real process, a provider on loopback, the camera over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuseforks.stores.sqlite import SqliteStore

KEY = "sk-run-cli-sentinel-0451"


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0",
         "--call", "nik__live_view_image"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    assert first.startswith("simulator: listening on "), first
    yield first.removeprefix("simulator: listening on ")
    process.terminate()
    process.wait(timeout=10)
    process.stdout.close()


def run(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    return subprocess.run(
        [sys.executable, "-m", "fuseforks", "run", "--mcp-config", str(config),
         "--db", str(tmp_path / "run.db"), "--log", str(tmp_path / "run.log"), *args],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | env)


def test_a_live_turn_prints_its_log_lines_progress_and_answer(simulator: str, tmp_path) -> None:
    done = run(tmp_path, "--wire", "gemini", "--model", "gemini-3.8-flash",
               "--base-url", f"{simulator}/gemini/v1beta", "--agent", "muse", "Take a picture.",
               env={"GEMINI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        "tool: agent=muse round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "turn: agent=muse backend=gemini model=gemini-3.8-flash rounds=2 stop=-",
    ]
    assert lines[-1].startswith("I see 1 image. image 1: left half ")
    assert done.stderr.splitlines() == [
        "… waiting on gemini (gemini-3.8-flash at 127.0.0.1)",
        "… calling tool nik__live_view_image",
        "… waiting on gemini (gemini-3.8-flash at 127.0.0.1)",
    ]
    assert (tmp_path / "run.log").read_text().splitlines() == lines[:2]
    with SqliteStore(tmp_path / "run.db") as store:
        assert len(store.turns()) == 1
    for path in (tmp_path / "run.db", tmp_path / "run.log"):
        assert KEY.encode() not in path.read_bytes()
    assert KEY not in done.stdout + done.stderr


def test_without_a_key_the_run_says_which_and_records_nothing(tmp_path) -> None:
    done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonnet-5-5", "hi", env={})
    assert done.returncode == 1
    assert "Error: no API key for anthropic: set one of its environment variables" in done.stderr
    assert not (tmp_path / "run.db").exists()


def test_a_provider_that_refuses_the_key_fails_the_turn_clearly(simulator: str, tmp_path) -> None:
    done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonnet-5-5",
               "--base-url", f"{simulator}/nowhere", "hi", env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 1
    assert "turn failed: WireRejected: backend=anthropic status=404" in done.stderr
    assert done.stdout.splitlines()[-1] == (
        "turn: agent=agent backend=anthropic model=claude-sonnet-5-5 rounds=1 stop=error")
    assert KEY not in done.stdout + done.stderr
