"""A server's progress reaches the progress line, and interrupting a turn during its tool calls
tells the server (`notifications/cancelled`), against a real MCP server
(`tests/mcp/servers/longrun.py`)."""

from __future__ import annotations

from typing import Any

from fuseforks.agent import Agent, AgentSettings
from fuseforks.core.canonical import ChatRequest, ChatResponse, ToolCall, Usage
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.images.vault import ImageVault
from fuseforks.live.tools import HubTools
from fuseforks.mcp import ToolHub
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.memory import MemoryStore
from tests.mcp.conftest import stdio


async def test_progress_notifications_reach_the_agents_progress_line() -> None:
    lines: list[str] = []
    script = Script(call_tools=("longrun__count",), arguments='{"steps": 3}')
    async with run_simulator(script=script) as simulator, Agent(
            wire="anthropic", model="claude-sonnet-4-5", base_url=simulator.base_urls["anthropic"],
            api_key="sk-test", mcp=[stdio("longrun", "longrun.py")], db=MemoryStore(), log=None,
            settings=AgentSettings(name="a"), on_progress=lines.append) as agent:
        result = await agent.run("count to three")
    assert result.stop == "answered"
    assert [line for line in lines if line.startswith("tool ")] == [
        "tool longrun__count: 1/3 step 1", "tool longrun__count: 2/3 step 2",
        "tool longrun__count: 3/3 step 3"]


class Model:
    wire, model, endpoint_host, placement = "anthropic", "m", "h", "native"

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: Any, *,
                   on_text: Any = None) -> ChatResponse:
        return ChatResponse(text="", tool_calls=[ToolCall(id="h", name="longrun__hang",
                                                          arguments={})],
                            usage=Usage(), stop_reason="tool_use", raw_model="m")


async def test_interrupting_a_turn_during_its_tools_cancels_the_running_requests() -> None:
    async with ToolHub([stdio("longrun", "longrun.py")], call_timeout=60) as hub:
        turn = Turn(TurnSpec(agent="a", request="hang"), Model(), HubTools(hub))

        def heard(tool: str, progress: float, total: float | None, message: str | None) -> None:
            if (tool, message) == ("longrun__hang", "started"):
                turn.interrupt("SIGINT")  # the call is running on the server now

        hub.on_progress = heard
        outcome = await turn.run()
        assert outcome.stop == "interrupted"
        # The server heard notifications/cancelled for the running call and cancelled it.
        assert (await hub.call("longrun__was_cancelled", {}, "en")).text == "cancelled"
