"""What the tool layer passes on for the gateway, against real server processes: a server's own
result, its progress, its list changes, its resources and prompts, and a restart after a hang."""

from __future__ import annotations

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import ImageContent, TextContent, TextResourceContents

from fuseforks.core.errors import McpUnavailable
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.mcp.catalog import Catalog
from tests.mcp.conftest import PYTHON, REPO, stdio

SHOTS = StdioServer(name="shots", command=PYTHON, args=["-m", "tests.gateway.servers.screenshots"],
                    cwd=str(REPO))


async def test_call_result_is_the_servers_own_result_and_forwards_progress() -> None:
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, total, message))

    async with ToolHub([SHOTS]) as hub:
        small = await hub.call_result("shots__small", {})
        stepped = await hub.call_result("shots__progress", {}, progress)
        unknown = await hub.call_result("shots__nothing", {})
    assert not isinstance(small, str)
    assert [type(block) for block in small.content] == [ImageContent, TextContent]
    assert not isinstance(stepped, str)
    assert stepped.content == [TextContent(type="text", text="done after 3 steps")]
    assert heard == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert unknown == "unknown tool 'shots__nothing'"


async def test_a_servers_tool_list_change_is_heard_and_its_tools_listed_again() -> None:
    changed = anyio.Event()
    heard: list[tuple[str, str]] = []

    async def on_change(server: str, kind: str) -> None:
        heard.append((server, kind))
        changed.set()

    async with ToolHub([SHOTS], on_change=on_change) as hub:
        before = [d.name for d in hub.list_tools()]
        await hub.call_result("shots__grow", {})
        with anyio.fail_after(60):
            await changed.wait()
        after = [d.name for d in hub.list_tools()]
    assert "shots__grown_1" not in before
    assert after == [*before, "shots__grown_1"]
    assert heard[0] == ("shots", "tools")


async def test_resources_templates_and_prompts_pass_through() -> None:
    async with ToolHub([SHOTS, stdio("faulty", "faulty.py")]) as hub:
        catalog = Catalog(hub)
        resources = await catalog.list_resources()
        templates = await catalog.list_resource_templates()
        latest = await catalog.read_resource("screen://latest")
        named = await catalog.read_resource("screen://shots/desk")
        prompts = await catalog.list_prompts()
        prompt = await catalog.get_prompt("shots__describe", {"what": "4K"})
        with pytest.raises(McpUnavailable, match="no server offers the resource file:///x"):
            await catalog.read_resource("file:///x")
        with pytest.raises(McpUnavailable, match="unknown prompt 'nope'"):
            await catalog.get_prompt("nope", None)
        with pytest.raises(MCPError):  # the server's own refusal, passed on as it is
            await catalog.get_prompt("shots__describe", None)
    assert [str(r.uri) for r in resources] == ["screen://latest"]
    assert [t.uri_template for t in templates] == ["screen://shots/{name}"]
    assert latest.contents == [TextResourceContents(uri="screen://latest", mime_type="text/plain",
                                                    text="a desktop with two windows")]
    assert [c.text for c in named.contents if isinstance(c, TextResourceContents)] == [
        "screenshot desk"]
    assert [(p.name, p.server, p.prompt.name) for p in prompts] == [
        ("shots__describe", "shots", "describe")]
    assert [m.content for m in prompt.messages] == [
        TextContent(type="text", text="Describe the 4K screenshot in one sentence.")]


@pytest.mark.parametrize("restart", [True, False])
async def test_a_server_that_hung_is_restarted_before_the_next_call_when_asked(
        restart: bool) -> None:
    async with ToolHub([stdio("faulty", "faulty.py")], call_timeout=3.0,
                       restart_after_timeout=restart) as hub:
        before = await hub.call_result("faulty__pid", {})
        hung = await hub.call_result("faulty__hang", {})
        after = await hub.call_result("faulty__pid", {})
    assert hung == "server 'faulty' did not answer 'hang' within 3 s; the call was cancelled"
    assert not isinstance(before, str) and not isinstance(after, str)
    pids = [b.content[0].text for b in (before, after) if isinstance(b.content[0], TextContent)]
    assert (pids[0] != pids[1]) is restart
