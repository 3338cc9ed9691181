"""A full loop: `fuseforks run` with the gateway as its only MCP server works exactly as it does
with the servers directly — the same log lines and answer, the same image digests — and the
gateway's record says which image it gave the engine."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuseforks.events.types import ImagesNormalized, ResultSent, SessionStarted
from tests.gateway.conftest import REPO, camera, recorded
from tests.helpers import processes
from tests.helpers.simulator import simulator as camera_calls

KEY = "sk-gateway-loop-0117"


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    with camera_calls("--call", "nik__live_view_image") as url:
        yield url


def run_turn(folder: Path, servers: dict[str, object], simulator: str) -> list[str]:
    folder.mkdir()
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    done = processes.run(
        [sys.executable, "-m", "fuseforks", "run", "--mcp-config", str(config), "--wire",
         "anthropic", "--model", "claude-sonnet-5-5", "--base-url", f"{simulator}/anthropic",
         "--db", str(folder / "run.db"), "--log", str(folder / "run.log"), "--agent", "muse",
         "Take a picture."],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        | {"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def digests(db: Path) -> list[str]:
    return [m.digest for turn in recorded(db) for e in turn
            if isinstance(e.event, ImagesNormalized) for m in e.event.images]


def test_a_turn_through_the_gateway_is_the_turn_without_it(simulator: str,
                                                          tmp_path: Path) -> None:
    direct = run_turn(tmp_path / "direct", {"nik": camera()}, simulator)
    inner = tmp_path / "inner.json"
    inner.write_text(json.dumps({"mcpServers": {"nik": camera()}}))
    gateway_db = tmp_path / "gateway.db"
    through = run_turn(tmp_path / "through", {"nik": {
        "command": sys.executable, "cwd": str(REPO),
        "args": ["-m", "fuseforks", "gateway", "--config", str(inner), "--tool-names", "plain",
                 "--db", str(gateway_db)]}}, simulator)
    assert through == direct == [
        "tool: agent=muse round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "I see 1 image. image 1: left half red, right half green.",
        "turn: agent=muse backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=answered",
    ]
    engine_saw = digests(tmp_path / "through" / "run.db")
    assert engine_saw == digests(tmp_path / "direct" / "run.db")
    [session] = recorded(gateway_db)
    started = session[0].event
    assert isinstance(started, SessionStarted) and started.client == "fuseforks"
    sent = [d for e in session if isinstance(e.event, ResultSent) for d in e.event.images]
    assert sent == engine_saw
