"""The turn-engine tests' real parts: the provider simulator on loopback and a real MCP server."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec

from fuseforks.agent import Agent, AgentSettings, TurnResult
from fuseforks.events.types import TurnEvent
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.projections.log import turn_log
from fuseforks.simulator import Script, Simulator, run_simulator
from fuseforks.stores.memory import MemoryStore
from fuseforks.wires.http import RetryPolicy

RIG = Path(__file__).parent / "servers" / "rig.py"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)


@asynccontextmanager
async def rig(script: Script) -> AsyncIterator[tuple[Simulator, ToolHub]]:
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    async with run_simulator(script=script) as simulator, ToolHub([server]) as hub:
        yield simulator, hub


async def run_turn(simulator: Simulator, tools: ToolHub, wire: str, model: str, *,
                   language: str = "en", max_rounds: int = 8, image_cap: int = 20,
                   agent: str = "a1", request: str = "Look at the camera.") -> TurnResult:
    """One turn through the library's `Agent`, the way a program runs one."""
    async with Agent(wire=wire, model=model, base_url=simulator.base_urls[wire],
                     api_key="sk-test", tools=tools, db=MemoryStore(), log=None,
                     settings=AgentSettings(language=language, max_rounds=max_rounds,
                                            image_cap=image_cap, name=agent, retry=FAST),
                     ) as runner:
        return await runner.run(request)


def events(result: TurnResult, kind: type | None = None) -> list[Any]:
    found: list[TurnEvent] = [e.event for e in result.events]
    return [e for e in found if kind is None or isinstance(e, kind)]


def log_lines(result: TurnResult) -> list[str]:
    return turn_log(result.events)


def bodies(simulator: Simulator) -> list[dict[str, Any]]:
    """Every request body the simulator received, decoded, in order."""
    return [msgspec.json.decode(r.body) for r in simulator.received]
