"""`fuseforks chat` in a real pseudo-terminal: turns, the image display line, slash commands,
Ctrl-C during a turn (recorded, the session goes on) and Ctrl-D (exit 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from fuseforks.events.types import TurnEnded, TurnInterrupted, TurnStarted
from fuseforks.stores.sqlite import SqliteStore

KEY = "sk-chat-0451"


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", "--latency", "0.8",
         "--call", "nik__live_view_image"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    yield first.removeprefix("simulator: listening on ")
    process.terminate()
    process.wait(timeout=10)
    process.stdout.close()


def test_a_chat_session_in_a_terminal(simulator: str, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    db = tmp_path / "chat.db"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    chat = pexpect.spawn(
        sys.executable,
        ["-m", "fuseforks", "chat", "--wire", "anthropic", "--model", "claude-sonnet-5-5",
         "--base-url", f"{simulator}/anthropic", "--mcp-config", str(config), "--db", str(db),
         "--log", str(tmp_path / "chat.log"), "--agent", "muse"],
        env=env | {"ANTHROPIC_API_KEY": KEY, "TERM": "dumb"}, encoding="utf-8", timeout=60,
        cwd=str(tmp_path))
    try:
        chat.expect(r"conversation conv-[0-9a-f]{32} ")
        chat.expect_exact("you> ")
        chat.sendline("Take a picture.")
        chat.expect_exact("tool: agent=muse round=1 name=nik__live_view_image ok=true "
                          "body_chars=52 images=1")
        chat.expect(r"\r\n  \(1 image: JPEG \d+ KB\)\r\n")
        # The answer as it arrives, on its own line, before the turn's log line; then not again.
        chat.expect_exact("I see 1 image. image 1: left half red, right half green.\r\n"
                          "turn: agent=muse backend=anthropic model=claude-sonnet-5-5 rounds=2 "
                          "stop=-\r\n")
        chat.expect(r"\[answered; rounds 2; tokens in \d+, out \d+\]")
        assert "I see" not in chat.before
        chat.expect_exact("you> ")
        chat.sendline("/turns")
        chat.expect(r"turn-[0-9a-f]{32} answered: Take a picture\.")
        chat.expect_exact("you> ")
        chat.sendline("Describe it again.")
        chat.expect_exact("Describe it again.")  # the echo of the line typed
        time.sleep(0.5)  # the request is in flight (the model takes 0.8 s)
        chat.sendintr()
        chat.expect(r"\[interrupted; rounds 1; tokens in 0, out 0\]")
        chat.expect_exact("you> ")
        chat.sendline("/audit")
        chat.expect_exact("you> ")  # the interrupted turn sent no image: nothing listed
        chat.sendeof()
        chat.expect(pexpect.EOF)
    finally:
        chat.close()
    assert chat.exitstatus == 0, chat.before

    with SqliteStore(db, read_only=True) as store:
        turns = [[e.event for e in store.read(t.turn_id)] for t in store.turns()]
    assert len(turns) == 2
    first, second = turns
    assert isinstance(first[-1], TurnEnded) and first[-1].stop == "answered"
    assert isinstance(second[-2], TurnInterrupted) and second[-2].cause == "SIGINT"
    assert isinstance(second[-1], TurnEnded) and second[-1].stop == "interrupted"
    started = second[0]
    assert isinstance(started, TurnStarted)
    assert [h.request for h in started.history] == ["Take a picture."]


def test_audit_names_where_an_image_was_received_after_the_native_placement_was_refused(
        simulator: str, tmp_path: Path) -> None:
    """gemini-2.5-flash refuses images inside a function response; the ladder moves them to a
    user-role message, which it takes: `/audit` lists the image once, as received there."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    chat = pexpect.spawn(
        sys.executable,
        ["-m", "fuseforks", "chat", "--wire", "gemini", "--model", "gemini-2.5-flash",
         "--base-url", f"{simulator}/gemini/v1beta", "--mcp-config", str(config),
         "--db", str(tmp_path / "chat.db"), "--log", str(tmp_path / "chat.log"), "--no-stream"],
        env=env | {"GEMINI_API_KEY": KEY, "TERM": "dumb"}, encoding="utf-8", timeout=60,
        cwd=str(tmp_path))
    try:
        chat.expect_exact("you> ")
        chat.sendline("Take a picture.")
        chat.expect_exact("placement=alternate")
        chat.expect(r"\[answered; rounds 2; tokens in \d+, out \d+\]")
        chat.expect_exact("you> ")
        chat.sendline("/audit")
        chat.expect(r"([0-9a-f]{64} JPEG \d+ B \S+ \S+ [a-z ]+)\r\n")
        listed = chat.match.group(1)
        chat.expect_exact("you> ")
        assert "B native" not in chat.before
        chat.sendeof()
        chat.expect(pexpect.EOF)
    finally:
        chat.close()
    assert listed.split()[4:] == ["alternate", "nik__live_view_image", "received"], listed
