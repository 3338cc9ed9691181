"""A peer framework's MCP client as the gateway's: pydantic-ai's `MCPToolset` (over fastmcp's
client), over stdio and HTTP, with an agent whose model (a function) calls a screenshot tool."""

from __future__ import annotations

import hashlib
import signal
from pathlib import Path
from typing import Any

from fastmcp.client.transports import StdioTransport
from mcp.types import Implementation
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from fuseforks.events.types import ResultSent, SessionStarted
from tests.gateway.conftest import (
    REPO,
    gateway_command,
    http_gateway,
    recorded,
    shots,
    write_config,
)
from tests.gateway.pictures import small_jpeg
from tests.helpers import processes

LAST_RESORT_S = 120
"""How long the client waits for the gateway's `initialize` answer: a last resort for a busy
machine, never a verdict on speed (pydantic-ai's own 5 s failed a loaded test run while the
gateway process was still importing)."""


def calls(tool: str) -> FunctionModel:
    """A model that calls `tool` once, then answers with the names of the tools it was offered."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool_name=tool, args={})])
        return ModelResponse(parts=[TextPart(content=",".join(t.name for t in info.function_tools))])

    return FunctionModel(respond)


def returned_images(messages: list[ModelMessage]) -> list[BinaryContent]:
    return [item for message in messages for part in message.parts
            if isinstance(part, ToolReturnPart) and isinstance(part.content, list)
            for item in part.content if isinstance(item, BinaryContent)]


async def run(toolset: MCPToolset[Any], tool: str) -> tuple[str, list[BinaryContent]]:
    agent = Agent(calls(tool), toolsets=[toolset])
    result = await agent.run("Take a screenshot.")
    return result.output, returned_images(result.all_messages())


async def test_pydantic_ai_over_stdio_gets_the_screenshot_within_its_profile(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "g.db"
    command = processes.leashed(gateway_command(config, "--db", str(db), "--profile",
                                                "claude-desktop"))
    toolset = MCPToolset(StdioTransport(command=command[0], args=command[1:], cwd=str(REPO)),
                         init_timeout=LAST_RESORT_S,
                         client_info=Implementation(name="screenshot-agent", version="1.0"))
    offered, [image] = await run(toolset, "shots__screen")
    assert "shots__screen" in offered.split(",")
    assert image.media_type == "image/jpeg"
    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted) and started.client == "screenshot-agent"
    sent = [d for e in session if isinstance(e.event, ResultSent) for d in e.event.images]
    assert sent == [hashlib.sha256(image.data).hexdigest()]


async def test_pydantic_ai_over_http_gets_the_screenshot(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "g.db"
    with http_gateway(config, "--db", str(db)) as gateway:
        _, [image] = await run(MCPToolset(gateway.url, init_timeout=LAST_RESORT_S),
                               "shots__small")
        assert gateway.stop(signal.SIGTERM) == 143
    assert image.data == small_jpeg()
    [session] = recorded(db)
    assert [d for e in session if isinstance(e.event, ResultSent) for d in e.event.images] == [
        hashlib.sha256(small_jpeg()).hexdigest()]
