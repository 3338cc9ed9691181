"""What the gateway passes on besides images: progress, a server's list changes, resources and
prompts, and a client's cancellation (upstream too)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent, TextResourceContents, ToolListChangedNotification

from fuseforks.engine.session import CANCELLED
from fuseforks.events.types import SessionEnded, ToolResultRecorded
from tests.gateway.conftest import recorded, shots, stdio_gateway, write_config


async def test_progress_reaches_the_client_that_made_the_call(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    heard: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        heard.append((value, total, message))

    async with stdio_gateway(config, "--db", str(tmp_path / "g.db")) as client:
        result = await client.call_tool("shots__progress", {}, progress_callback=progress)
    assert result.content == [TextContent(type="text", text="done after 3 steps")]
    assert heard == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_servers_new_tool_is_announced_and_listed(tmp_path: Path, mode: str) -> None:
    config = write_config(tmp_path, shots=shots())
    announced = anyio.Event()

    async def messages(message: object) -> None:
        if isinstance(message, ToolListChangedNotification):
            announced.set()

    async with stdio_gateway(config, "--db", str(tmp_path / "g.db"), "--tool-names", "plain",
                             mode=mode, message_handler=messages) as client:
        before = [t.name for t in (await client.list_tools()).tools]
        if mode == "auto":  # 2026-07-28: changes come on a subscriptions/listen stream
            async with client.listen(tools_list_changed=True) as changes:
                await client.call_tool("grow", {})
                with anyio.fail_after(60):
                    async for _ in changes:
                        break
        else:
            await client.call_tool("grow", {})
            with anyio.fail_after(60):
                await announced.wait()
        after = [t.name for t in (await client.list_tools(cache_mode="bypass")).tools]
        grown = await client.call_tool("grown_1", {})
    assert "grown_1" not in before and after == [*before, "grown_1"]
    assert grown.content == [TextContent(type="text", text="grown_1")]


async def test_resources_templates_and_prompts_pass_through(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    async with stdio_gateway(config, "--db", str(tmp_path / "g.db")) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        latest = await client.read_resource("screen://latest")
        named = await client.read_resource("screen://shots/desk")
        prompts = (await client.list_prompts()).prompts
        prompt = await client.get_prompt("shots__describe", {"what": "retina"})
        with pytest.raises(MCPError, match="no server offers the resource file:///nothing"):
            await client.read_resource("file:///nothing")
    assert [str(r.uri) for r in resources] == ["screen://latest"]
    assert [t.uri_template for t in templates] == ["screen://shots/{name}"]
    assert latest.contents == [TextResourceContents(uri="screen://latest", mime_type="text/plain",
                                                    text="a desktop with two windows")]
    assert [c.text for c in named.contents if isinstance(c, TextResourceContents)] == [
        "screenshot desk"]
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts] == [
        ("shots__describe", ["what"])]
    assert [m.content for m in prompt.messages] == [
        TextContent(type="text", text="Describe the retina screenshot in one sentence.")]


async def test_a_cancelled_call_is_cancelled_upstream_and_recorded(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    config = write_config(tmp_path, shots=shots({"SHOTS_MARKER": str(marker)}))
    db = tmp_path / "g.db"
    async with stdio_gateway(config, "--db", str(db)) as client:
        started = anyio.Event()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            started.set()

        async with anyio.create_task_group() as group:
            group.start_soon(lambda: client.call_tool("shots__stall", {},
                                                      progress_callback=progress))
            await started.wait()  # the call runs upstream: now the client gives up on it
            group.cancel_scope.cancel()
        answer = await client.call_tool("shots__pid", {})
    assert answer.content[0].type == "text"
    with anyio.fail_after(60):
        while not marker.exists():  # noqa: ASYNC110 - the upstream server writes it
            await anyio.sleep(0.05)
    assert marker.read_text() == "cancelled"  # the upstream server's call was cancelled
    [session] = recorded(db)
    results = [e.event for e in session if isinstance(e.event, ToolResultRecorded)]
    assert [(r.name, r.ok, r.fault) for r in results] == [
        ("shots__stall", False, CANCELLED), ("shots__pid", True, None)]
    assert session[-1].event == SessionEnded(calls=2, cause="closed")
