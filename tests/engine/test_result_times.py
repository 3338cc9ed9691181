"""Each tool result is recorded when its tool finishes, not when the round's slowest one does:
the record knows when each tool ended, each `execute_tool` span lasts as long as its own tool,
the provider still reads the results in call order, and replay records them again in the order
they arrived. The tools are a real MCP server's (`tests/engine/servers/rig.py`)."""

from __future__ import annotations

import sys
from typing import Any

import anyio

from fuseforks.core.canonical import ToolCall, ToolResultMessage
from fuseforks.engine.replay import verify
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.types import ToolCalled, ToolResultRecorded, ToolSpecRecord
from fuseforks.live.tools import HubTools
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.ports.tools import ToolOutput
from fuseforks.traces.spans import turn_spans
from tests.engine.rig import RIG
from tests.helpers.models import ScriptedModel, one_tool_round


class Clock:
    """The time the test says it is."""

    def __init__(self) -> None:
        self.at = "2026-01-01T00:00:00.000Z"

    def now(self) -> str:
        return self.at


def _model() -> ScriptedModel:
    return ScriptedModel(one_tool_round(ToolCall(id="slow", name="rig__frame", arguments={}),
                                        ToolCall(id="fast", name="rig__status", arguments={})))


class Timed:
    """The hub's tools, finishing `rig__status` at 2 s and `rig__frame` (held until then) at 7 s."""

    def __init__(self, tools: HubTools, clock: Clock) -> None:
        self.tools, self.clock = tools, clock
        self.status_done = anyio.Event()

    def tool_specs(self) -> list[ToolSpecRecord]:
        return self.tools.tool_specs()

    def server_of(self, name: str) -> str:
        return self.tools.server_of(name)

    async def call(self, name: str, arguments: dict[str, Any], language: str) -> ToolOutput:
        output = await self.tools.call(name, arguments, language)
        if name == "rig__status":
            self.clock.at = "2026-01-01T00:00:02.000Z"
            self.status_done.set()
        else:
            await self.status_done.wait()
            self.clock.at = "2026-01-01T00:00:07.000Z"
        return output


async def test_each_result_is_recorded_when_its_tool_finishes() -> None:
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    clock, model = Clock(), _model()
    async with ToolHub([server]) as hub:
        turn = Turn(TurnSpec(agent="a", request="look"), model, Timed(HubTools(hub), clock),
                    clock=clock)
        outcome = await turn.run()
    recorded = outcome.history
    assert [e.event.name for e in recorded if isinstance(e.event, ToolCalled)] == [
        "rig__frame", "rig__status"]
    assert [(e.event.call_id, e.at) for e in recorded if isinstance(e.event, ToolResultRecorded)
            ] == [("fast", "2026-01-01T00:00:02.000Z"), ("slow", "2026-01-01T00:00:07.000Z")]

    # The provider reads the results in the order it asked for them.
    results = [m for m in model.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in results] == ["slow", "fast"]

    # Each execute_tool span lasts as long as its own tool.
    spans = {s.name: s for s in turn_spans(recorded)}
    fast, slow = spans["execute_tool rig__status"], spans["execute_tool rig__frame"]
    assert (fast.end_ns - fast.start_ns, slow.end_ns - slow.start_ns) == (2 * 10**9, 7 * 10**9)

    verification = await verify(recorded)
    assert verification.identical, verification.divergence


class Interrupting(Timed):
    """`rig__status` answers and the turn is interrupted; `rig__frame` never finishes."""

    turn: Turn

    async def call(self, name: str, arguments: dict[str, Any], language: str) -> ToolOutput:
        output = await self.tools.call(name, arguments, language)
        if name == "rig__frame":
            await anyio.sleep_forever()
        self.turn.interrupt("SIGINT")
        return output


async def test_a_turn_interrupted_during_its_tools_keeps_the_results_that_arrived() -> None:
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    clock = Clock()
    async with ToolHub([server]) as hub:
        tools = Interrupting(HubTools(hub), clock)
        tools.turn = turn = Turn(TurnSpec(agent="a", request="look"), _model(), tools, clock=clock)
        outcome = await turn.run()
    kinds = [(type(e.event).__name__, getattr(e.event, "call_id", "")) for e in outcome.history]
    assert kinds[-5:] == [("ToolCalled", "slow"), ("ToolCalled", "fast"),
                          ("ToolResultRecorded", "fast"), ("TurnInterrupted", ""),
                          ("TurnEnded", "")]
    verification = await verify(outcome.history)
    assert verification.identical, verification.divergence
