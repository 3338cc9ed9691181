"""The turn-engine tests' real parts: the provider simulator on loopback and a real MCP server."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec

from fuseforks.engine.turn import Turn, TurnOutcome, TurnSpec
from fuseforks.events.types import TurnEvent
from fuseforks.live import HubTools, LiveModel
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.simulator import Script, Simulator, run_simulator
from fuseforks.wires.base import Endpoint
from fuseforks.wires.http import RetryPolicy

RIG = Path(__file__).parent / "servers" / "rig.py"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)


@asynccontextmanager
async def rig(script: Script) -> AsyncIterator[tuple[Simulator, HubTools]]:
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    async with run_simulator(script=script) as simulator, ToolHub([server]) as hub:
        yield simulator, HubTools(hub)


async def run_turn(simulator: Simulator, tools: HubTools, wire: str, model: str, *,
                   language: str = "en", max_rounds: int = 8, image_cap: int = 20,
                   agent: str = "a1") -> TurnOutcome:
    live = LiveModel(wire, model, Endpoint(base_url=simulator.base_urls[wire], api_key="sk-test"),
                     policy=FAST)
    try:
        spec = TurnSpec(agent=agent, request="Look at the camera.", language=language,
                        max_rounds=max_rounds, image_cap=image_cap)
        return await Turn(spec, live, tools).run()
    finally:
        await live.aclose()


def events(result: TurnOutcome, kind: type | None = None) -> list[Any]:
    found: list[TurnEvent] = [e.event for e in result.history]
    return [e for e in found if kind is None or isinstance(e, kind)]


def log_lines(result: TurnOutcome) -> list[str]:
    return list(fold(evolve_log, LogState(), result.history).lines)


def bodies(simulator: Simulator) -> list[dict[str, Any]]:
    """Every request body the simulator received, decoded, in order."""
    return [msgspec.json.decode(r.body) for r in simulator.received]
