"""Faults of real server processes: each is a tool error with an exact one-line reason.

Timeouts are set to 1 s here (the default is 60 s) so the suite stays quick.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from fuseforks.mcp import HttpServer, StdioServer, ToolHub
from fuseforks.ports.tools import ToolOutput
from tests.helpers.ports import free_port
from tests.mcp.conftest import PYTHON, SERVERS, camera_stdio, stdio

MISSING = "/nonexistent/fuseforks-no-such-server"


def error(reason: str) -> ToolOutput:
    return ToolOutput(text=f"Tool returned an error: {reason}", is_error=True, fault=reason)


async def test_crash_mid_call_is_a_tool_error_and_the_next_call_restarts() -> None:
    async with ToolHub([stdio("faulty", "faulty.py")]) as hub:
        before = (await hub.call("faulty__pid", {}, "en")).text
        crashed = await hub.call("faulty__crash", {}, "en")
        after = await hub.call("faulty__pid", {}, "en")
    assert crashed == error(
        "server 'faulty' closed the connection during the call (exit status 3; stderr: boom: "
        "simulated crash)"
    )
    assert after.fault is None and after.text.isdigit()
    assert after.text != before  # a new process answered


async def test_hang_times_out_and_the_call_is_cancelled_on_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    config = stdio("faulty", "faulty.py", env={"FAULTY_MARKER": str(marker)})
    async with ToolHub([config], call_timeout=1.0) as hub:
        pid = (await hub.call("faulty__pid", {}, "en")).text
        started = time.monotonic()
        with anyio.fail_after(120):  # without the hub's timeout this test fails instead of hanging
            hung = await hub.call("faulty__hang", {}, "en")
        waited = time.monotonic() - started
        with anyio.fail_after(120):
            while not marker.exists():  # noqa: ASYNC110 - another process writes the file
                await anyio.sleep(0.02)
        again = await hub.call("faulty__pid", {}, "en")
    assert hung == error("server 'faulty' did not answer 'hang' within 1 s; the call was cancelled")
    assert waited >= 0.9  # the timeout, not an answer (the fault names it)
    assert marker.read_text() == "cancelled"
    assert again.text == pid  # a timeout leaves a live server alone: no restart


async def test_exit_at_start_is_reported_and_restarted_once_only(tmp_path: Path) -> None:
    counter = tmp_path / "starts"
    config = stdio("broken", "exit_at_start.py", env={"EXIT_COUNTER": str(counter)})
    reason = ("server 'broken' exited before completing the MCP handshake (exit status 3; "
              "stderr: fatal: no camera attached)")
    async with ToolHub([config]) as hub:
        assert hub.start_faults == {"broken": reason}
        assert hub.list_tools() == []
        first = await hub.call("broken__live_view_image", {}, "en")
        second = await hub.call("broken__live_view_image", {}, "en")
        third = await hub.call("broken__live_view_image", {}, "en")
    assert first == error(reason)
    assert second == error(f"server 'broken' is down (restart failed): {reason}")
    assert third == second
    assert counter.read_text() == "start\nstart\n"  # the hub's start plus exactly one restart


async def test_hang_at_initialize_is_a_handshake_timeout() -> None:
    async with ToolHub([stdio("stuck", "hang_at_init.py")], start_timeout=1.0) as hub:
        assert hub.start_faults == {
            "stuck": "server 'stuck' did not complete the MCP handshake within 1 s"
        }


async def test_a_servers_own_start_timeout_wins_over_the_hubs() -> None:
    stuck = StdioServer(
        name="stuck", command=PYTHON, args=[str(SERVERS / "hang_at_init.py")], start_timeout=0.5
    )
    async with ToolHub([stuck], start_timeout=60.0) as hub:
        faults = dict(hub.start_faults)
    # The fault names the timeout that fired: the server's 0.5 s, not the hub's 60 s.
    assert faults == {"stuck": "server 'stuck' did not complete the MCP handshake within 0.5 s"}


async def test_waiting_for_a_server_is_reported_every_interval_until_it_gives_up() -> None:
    reports: list[tuple[str, float]] = []
    async with ToolHub(
        [stdio("stuck", "hang_at_init.py")],
        start_timeout=1.5,
        on_waiting=lambda server, waited: reports.append((server, waited)),
        waiting_interval=0.4,
    ) as hub:
        faults = dict(hub.start_faults)
        after_start = len(reports)
        await anyio.sleep(1.0)
    assert faults == {"stuck": "server 'stuck' did not complete the MCP handshake within 1.5 s"}
    # 0.4, 0.8, 1.2 while it hangs, and possibly more while its process is being stopped; a
    # starved event loop may run the timeout before the later reports, never before the first.
    assert reports[:1] == [("stuck", 0.4)]
    assert reports == [("stuck", round(0.4 * n, 3)) for n in range(1, len(reports) + 1)]
    assert len(reports) == after_start  # nothing once the start is over


async def test_a_slow_server_is_reported_while_it_starts_and_then_works() -> None:
    reports: list[tuple[str, float]] = []
    slow = stdio("slow", "slow_start.py", env={"SLOW_START_SECONDS": "1.3"})
    async with ToolHub(
        [slow], on_waiting=lambda server, waited: reports.append((server, waited)),
        waiting_interval=0.5,
    ) as hub:
        assert hub.start_faults == {}
        after_start = len(reports)
        output = await hub.call("slow__ping", {}, "en")
        await anyio.sleep(0.6)
    assert output == ToolOutput(text="pong")
    assert reports[:1] == [("slow", 0.5)]  # it takes over 1.3 s: 0.5 and 1.0, or more
    assert reports == [("slow", round(0.5 * n, 3)) for n in range(1, len(reports) + 1)]
    assert len(reports) == after_start


async def test_a_failing_progress_callback_does_not_cost_the_start() -> None:
    def broken(server: str, waited: float) -> None:
        raise RuntimeError("terminal gone")

    slow = stdio("slow", "slow_start.py", env={"SLOW_START_SECONDS": "0.6"})
    async with ToolHub([slow], on_waiting=broken, waiting_interval=0.2) as hub:
        output = await hub.call("slow__ping", {}, "en")
    assert output == ToolOutput(text="pong")


async def test_garbage_on_stdout_is_named_in_the_reason_within_seconds() -> None:
    """Not at the end of the start timeout (30 s): a few seconds after the line that shows the
    server does not speak JSON-RPC."""
    started = time.monotonic()
    async with ToolHub([stdio("noisy", "garbage.py")]) as hub:
        waited = time.monotonic() - started
        output = await hub.call("noisy__anything", {}, "en")
    reason = (
        "server 'noisy' writes to stdout what is not JSON-RPC (its first line: 'Usage: "
        "camera-tool [--live] [--status]') and did not complete the MCP handshake within 3 s of it"
    )
    assert hub.start_faults == {"noisy": reason}
    assert output == error(reason)
    assert 2.9 <= waited < 10


async def test_missing_executable_is_command_not_found() -> None:
    reason = f"server 'ghost' could not be started: command not found: '{MISSING}'"
    async with ToolHub([StdioServer(name="ghost", command=MISSING)]) as hub:
        assert hub.start_faults == {"ghost": reason}
        assert await hub.call("ghost__x", {}, "en") == error(reason)


async def test_unreachable_http_server_is_named_with_its_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with ToolHub([HttpServer(name="far", url=url)]) as hub:
        faults = dict(hub.start_faults)
    reached = f"server 'far' could not be reached at {url}: "  # then the client's reason
    assert list(faults) == ["far"]
    assert faults["far"].startswith(reached) and faults["far"] != reached
    assert "\n" not in faults["far"]


async def test_one_broken_server_leaves_the_others_working() -> None:
    configs = [StdioServer(name="ghost", command=MISSING), camera_stdio()]
    async with ToolHub(configs) as hub:
        assert [tool.name for tool in hub.list_tools()] == [
            "cam__live_view_image",
            "cam__camera_status",
        ]
        output = await hub.call("cam__live_view_image", {}, "en")
    assert output.fault is None and len(output.images) == 1


async def test_unknown_tools_are_tool_errors_not_exceptions() -> None:
    async with ToolHub([stdio("faulty", "faulty.py")]) as hub:
        unknown_on_server = await hub.call("faulty__nope", {}, "en")
        no_server = await hub.call("nope", {}, "ja")
    assert unknown_on_server == error("unknown tool 'faulty__nope'")
    assert no_server == ToolOutput(
        text="ツールはエラーを返しました: unknown tool 'nope'",
        is_error=True,
        fault="unknown tool 'nope'",
    )


async def test_invalid_arguments_come_back_as_the_servers_tool_error() -> None:
    async with ToolHub([stdio("faulty", "faulty.py")]) as hub:
        output = await hub.call("faulty__add", {"a": "x", "b": 2}, "en")
        fine = await hub.call("faulty__add", {"a": 1, "b": 2}, "en")
    assert output.is_error and output.fault is None
    assert output.text.startswith("Tool returned an error: Error executing tool add: 1 validation")
    assert fine == ToolOutput(text="3")


async def test_a_json_rpc_error_from_the_server_is_a_tool_error_with_its_code() -> None:
    async with ToolHub([stdio("faulty", "faulty.py")]) as hub:
        refused = await hub.call("faulty__strict", {"fps": 99}, "en")
        fine = await hub.call("faulty__strict", {"fps": 12}, "en")
    assert refused == error(
        "server 'faulty' rejected the call to 'strict': frame rate must be 1-30 (code -32602)"
    )
    assert fine == ToolOutput(text="12 fps")


async def test_stdio_server_gets_configured_env_but_not_the_callers_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FUSEFORKS_SENTINEL_API_KEY", "sk-sentinel-must-not-leak")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sentinel-must-not-leak")
    monkeypatch.setenv("FAULTY_GIVEN", "from-the-caller")
    config = stdio("faulty", "faulty.py", env={"FAULTY_GIVEN": "from-the-config"})
    async with ToolHub([config]) as hub:
        seen = json.loads((await hub.call("faulty__env_probe", {}, "en")).text)
        names = set(json.loads((await hub.call("faulty__env_names", {}, "en")).text))
    assert seen["FUSEFORKS_SENTINEL_API_KEY"] is None
    assert seen["FAULTY_GIVEN"] == "from-the-config"
    assert seen["PATH"] and seen["HOME"]
    # Only the configured variable and the SDK's short list of harmless names (HOME, LOGNAME,
    # PATH, SHELL, TERM, USER); LC_CTYPE is set by the child's own Python (PEP 538).
    assert names - {"LC_CTYPE"} <= {"FAULTY_GIVEN", *DEFAULT_INHERITED_ENV_VARS}
    assert {"FAULTY_GIVEN", "PATH", "HOME"} <= names
