"""`fuseforks chat` in a real pseudo-terminal: turns, the image display line, slash commands,
Ctrl-C during a turn (recorded, the session goes on) and Ctrl-D (exit 0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from fuseforks.events.types import TurnEnded, TurnInterrupted, TurnStarted
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes

KEY = "sk-chat-0451"


@pytest.fixture(scope="module")
def simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process = processes.spawn(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0",
         "--call", "nik__live_view_image", "--record-requests", str(requests_of(tmp_path_factory))],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    yield first.removeprefix("simulator: listening on ")
    process.terminate()
    process.wait(timeout=10)
    process.stdout.close()


def requests_of(factory: pytest.TempPathFactory) -> Path:
    """Where the module's simulator writes each request it receives."""
    return factory.getbasetemp() / "chat-simulator-requests"


def fault_next_request(simulator: str, fault: dict[str, object]) -> None:
    _post(f"{simulator}/_sim/faults", json.dumps([fault]).encode())


def stall_next_request(simulator: str) -> None:
    """The simulator keeps the next request waiting (two minutes): a turn stays in flight for as
    long as the test needs, however slow the machine."""
    fault_next_request(simulator, {"kind": "stall", "seconds": 120})


def release_held_requests(simulator: str) -> None:
    _post(f"{simulator}/_sim/release", b"")


def _post(url: str, body: bytes) -> None:
    request = urllib.request.Request(url, data=body, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200


def wait_for_requests(folder: Path, count: int) -> None:
    deadline = time.monotonic() + 120  # a last resort against a hang, not a speed check
    while len(list(folder.iterdir())) < count:
        assert time.monotonic() < deadline, f"the simulator never got request {count}"
        time.sleep(0.05)


def start_chat(simulator: str, tmp_path: Path) -> pexpect.spawn:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    launcher, *arguments = processes.leashed(
        [sys.executable, "-m", "fuseforks", "chat", "--wire", "anthropic", "--model",
         "claude-sonnet-5-5", "--base-url", f"{simulator}/anthropic", "--mcp-config", str(config),
         "--db", str(tmp_path / "chat.db"), "--log", str(tmp_path / "chat.log"),
         "--agent", "muse"])
    return pexpect.spawn(launcher, arguments, env=env | {"ANTHROPIC_API_KEY": KEY, "TERM": "dumb"},
                         encoding="utf-8", timeout=60, cwd=str(tmp_path))


def test_a_chat_session_in_a_terminal(simulator: str, tmp_path: Path,
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path / "chat.db"
    before = len(list(requests_of(tmp_path_factory).iterdir()))
    chat = start_chat(simulator, tmp_path)
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
                          "stop=answered\r\n")
        chat.expect(r"\[answered; rounds 2; tokens in \d+, out \d+\]")
        assert "I see" not in chat.before
        chat.expect_exact("you> ")
        chat.sendline("/turns")
        chat.expect(r"turn-[0-9a-f]{32} answered: Take a picture\.")
        chat.expect_exact("you> ")
        stall_next_request(simulator)
        chat.sendline("Describe it again.")
        chat.expect_exact("Describe it again.")  # the echo of the line typed
        wait_for_requests(requests_of(tmp_path_factory), before + 3)  # the request is in flight
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


def test_ctrl_c_at_the_prompt_prompts_again_and_ctrl_d_in_a_turn_ends_after_it(
        simulator: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    requests = requests_of(tmp_path_factory)
    chat = start_chat(simulator, tmp_path)
    try:
        chat.expect_exact("you> ")
        chat.sendintr()
        chat.expect_exact("(Ctrl-D or /quit ends the session)\r\nyou> ")
        chat.sendline("/turns")
        chat.expect_exact("(no turns in this conversation yet)\r\nyou> ")
        fault_next_request(simulator, {"kind": "hold"})
        before = len(list(requests.iterdir()))
        chat.sendline("Take a picture.")
        wait_for_requests(requests, before + 1)  # the turn waits on the model
        chat.sendeof()
        release_held_requests(simulator)
        chat.expect(r"\[answered; rounds 2; tokens in \d+, out \d+\]\r\n")
        chat.expect_exact("(Ctrl-D during the turn: the session ends)")
        chat.expect(pexpect.EOF)
    finally:
        chat.close()
    assert chat.exitstatus == 0, chat.before
    with SqliteStore(tmp_path / "chat.db", read_only=True) as store:
        (turn,) = store.turns()
        assert isinstance(store.read(turn.turn_id)[-1].event, TurnEnded)


def test_audit_names_where_an_image_was_received_after_the_native_placement_was_refused(
        simulator: str, tmp_path: Path) -> None:
    """gemini-2.5-flash refuses images inside a function response; the ladder moves them to a
    user-role message, which it takes: `/audit` lists the image once, as received there."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    launcher, *arguments = processes.leashed(
        [sys.executable, "-m", "fuseforks", "chat", "--wire", "gemini", "--model",
         "gemini-2.5-flash", "--base-url", f"{simulator}/gemini/v1beta", "--mcp-config",
         str(config), "--db", str(tmp_path / "chat.db"), "--log", str(tmp_path / "chat.log"),
         "--no-stream"])
    chat = pexpect.spawn(launcher, arguments, env=env | {"GEMINI_API_KEY": KEY, "TERM": "dumb"},
                         encoding="utf-8", timeout=60, cwd=str(tmp_path))
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
