"""An upstream server that crashes, hangs or writes garbage: the client gets an error result,
the gateway restarts the server and goes on; a signal ends the gateway cleanly, with every
session's end recorded; a bad configuration is one line, not a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from mcp.types import TextContent

from fuseforks.events.types import SessionEnded, SessionStarted, ToolResultRecorded
from tests.gateway.conftest import (
    PYTHON,
    REPO,
    gateway_command,
    misbehaving,
    recorded,
    shots,
    stdio_gateway,
    write_config,
)
from tests.helpers import processes

GARBLER = [PYTHON, str(REPO / "tests" / "gateway" / "servers" / "garbler.py")]


def text(result: object) -> str:
    content = result.content  # type: ignore[attr-defined]
    assert isinstance(content[0], TextContent)
    return content[0].text


async def test_a_crashed_server_is_an_error_result_and_is_restarted(tmp_path: Path) -> None:
    config = write_config(tmp_path, faulty=misbehaving("faulty.py"), shots=shots())
    async with stdio_gateway(config, "--db", str(tmp_path / "g.db")) as client:
        before = text(await client.call_tool("faulty__pid", {}))
        crashed = await client.call_tool("faulty__crash", {})
        small = await client.call_tool("shots__small", {})
        after = text(await client.call_tool("faulty__pid", {}))
    assert crashed.is_error
    assert text(crashed) == ("Tool returned an error: server 'faulty' closed the connection "
                             "during the call (exit status 3; stderr: boom: simulated crash)")
    assert not small.is_error  # the other server never noticed
    assert after.isdigit() and after != before  # a new process answered


async def test_a_hung_server_times_out_and_is_restarted(tmp_path: Path) -> None:
    config = write_config(tmp_path, faulty=misbehaving("faulty.py"))
    async with stdio_gateway(config, "--db", str(tmp_path / "g.db"),
                             "--call-timeout", "3") as client:
        before = text(await client.call_tool("faulty__pid", {}))
        hung = await client.call_tool("faulty__hang", {})
        after = text(await client.call_tool("faulty__pid", {}))
    assert hung.is_error and text(hung) == (
        "Tool returned an error: server 'faulty' did not answer 'hang' within 3 s; the call was "
        "cancelled")
    assert after != before


async def test_a_server_writing_garbage_mid_call_is_an_error_and_is_restarted(
        tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    config = write_config(tmp_path, garbler={"command": GARBLER[0], "args": GARBLER[1:],
                                             "env": {"GARBLER_STARTS": str(starts)}})
    async with stdio_gateway(config, "--db", str(tmp_path / "g.db"),
                             "--call-timeout", "3") as client:
        first = await client.call_tool("garbler__say", {})
        second = await client.call_tool("garbler__say", {})
    for result in (first, second):
        assert result.is_error
        assert text(result) == ("Tool returned an error: server 'garbler' did not answer 'say' "
                                "within 3 s; the call was cancelled")
    assert len(starts.read_text().splitlines()) == 2  # started, then restarted for the second


async def test_a_server_that_does_not_start_leaves_the_others_serving(tmp_path: Path) -> None:
    config = write_config(tmp_path, broken={"command": "/nonexistent/no-such-server"},
                          shots=shots())
    db = tmp_path / "g.db"
    async with stdio_gateway(config, "--db", str(db)) as client:
        tools = [t.name for t in (await client.list_tools()).tools]
        missing = await client.call_tool("broken__anything", {})
    assert "shots__small" in tools and not any(t.startswith("broken__") for t in tools)
    assert missing.is_error
    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted)
    assert [(d.server, d.reason) for d in started.servers_down] == [
        ("broken", "server 'broken' could not be started: command not found: "
                   "'/nonexistent/no-such-server'")]


def send(process: subprocess.Popen[str], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def read_reply(process: subprocess.Popen[str], request_id: int) -> dict[str, object]:
    assert process.stdout is not None
    for line in process.stdout:
        message = json.loads(line)
        if message.get("id") == request_id:
            return dict(message)
    raise AssertionError("the gateway closed stdout without answering")


@pytest.mark.parametrize(("signum", "cause", "code"), [(signal.SIGTERM, "SIGTERM", 143),
                                                       (signal.SIGINT, "SIGINT", 130)])
def test_a_signal_ends_the_gateway_cleanly_while_a_call_runs(
        tmp_path: Path, signum: int, cause: str, code: int) -> None:
    marker = tmp_path / "cancelled"
    config = write_config(tmp_path, shots=shots({"SHOTS_MARKER": str(marker)}))
    db = tmp_path / "g.db"
    process = processes.spawn(gateway_command(config, "--db", str(db)), cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-client", "version": "0"}}})
        read_reply(process, 1)
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "shots__stall", "arguments": {}, "_meta": {"progressToken": "p"}}})
        assert process.stdout is not None
        progress = json.loads(process.stdout.readline())  # the call runs upstream
        assert progress["method"] == "notifications/progress"
        process.send_signal(signum)  # stdin stays open: the client is still there
        assert process.wait(timeout=120) == code
        assert process.stderr is not None
        assert "Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert marker.read_text() == "cancelled"  # the upstream call was cancelled, not abandoned
    [session] = recorded(db)
    ended = session[-1].event
    assert isinstance(ended, SessionEnded)
    assert (ended.calls, ended.cause, len(ended.unanswered)) == (1, cause, 1)
    assert not any(isinstance(e.event, ToolResultRecorded) for e in session)


@pytest.mark.parametrize(("document", "message"), [
    ("{not json", "not valid JSON"),
    ('{"mcpServers": {"ws": {"type": "websocket", "url": "ws://x"}}}',
     "mcpServers.ws: transport type 'websocket' is not supported"),
    ('{"servers": {}}', 'the configuration must be an object with an "mcpServers" object'),
])
def test_a_bad_configuration_is_one_line(tmp_path: Path, document: str, message: str) -> None:
    config = tmp_path / "bad.json"
    config.write_text(document)
    result = processes.run(gateway_command(config), cwd=REPO, capture_output=True, text=True,
                           timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: ") and message in line
