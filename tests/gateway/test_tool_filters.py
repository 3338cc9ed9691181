"""Allow and deny lists of a server's tools (the entry's `tools`): the hub lists only the tools
they let through and refuses a call to any other as it refuses an unknown tool; the gateway's
client sees the same, and the session's start records the lists."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread
from click.testing import CliRunner
from mcp.types import CallToolResult, TextContent

from fuseforks.cli import main
from fuseforks.events.types import SessionStarted, ToolFilterRecord
from fuseforks.mcp import load_config
from fuseforks.mcp.hub import ToolHub
from tests.gateway.conftest import camera, recorded, shots, stdio_gateway, write_config


def texts(result: CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


FILTERED = {"allow": ["s*", "pid", "grow"], "deny": ["*all", "grow"]}
"""Of the screenshot server's tools: screen and pid (`*all` takes small and stall; deny wins
over grow)."""


async def test_the_hub_lists_only_allowed_tools_and_refuses_the_others(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots={**shots(), "tools": FILTERED})
    async with ToolHub(load_config(config)) as hub:
        listed = [tool.name for tool in hub.list_tools()]
        assert [name for name, _ in hub.listed_tools()] == listed
        refused = await hub.call_result("shots__retina", {})
        denied = await hub.call_result("shots__grow", {})
        allowed = await hub.call_result("shots__pid", {})
        output = await hub.call("shots__small", {}, "en")
    assert listed == ["shots__screen", "shots__pid"]
    assert refused == "unknown tool 'shots__retina'"
    assert denied == "unknown tool 'shots__grow'"
    assert not isinstance(allowed, str) and not allowed.is_error
    assert (output.is_error, output.fault) == (True, "unknown tool 'shots__small'")


async def test_a_gateway_client_sees_only_allowed_tools_and_the_start_records_the_lists(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, cam=camera(), shots={**shots(), "tools": FILTERED})
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db)) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        refused = await client.call_tool("shots__retina", {})
        unknown = await client.call_tool("shots__nothing", {})
        answered = await client.call_tool("shots__pid", {})
    assert listed == ["cam__live_view_image", "cam__camera_status", "shots__screen",
                      "shots__pid"]
    assert refused.is_error and unknown.is_error
    assert texts(refused) == ["Tool returned an error: unknown tool 'shots__retina'"]
    assert texts(unknown) == ["Tool returned an error: unknown tool 'shots__nothing'"]
    assert not answered.is_error
    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted)
    assert [tool.name for tool in started.tools] == listed
    assert started.tool_filters == [ToolFilterRecord(
        server="shots", allow=["s*", "pid", "grow"], deny=["*all", "grow"])]
    # replay re-drives the session from its start: the lists are re-recorded as they were
    replayed = await anyio.to_thread.run_sync(CliRunner().invoke, main,
                                              ["replay", str(db), "--verify"])
    assert replayed.exit_code == 0, replayed.output
    assert replayed.stdout.splitlines()[-1].startswith("  verify: identical (")
