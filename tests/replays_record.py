"""Records the streams in `replays/`: `python -m tests.replays_record` (run from the repository).

Each scenario runs the real engine against the provider simulator on loopback and a real MCP
server process, with a fixed clock so that re-recording gives stable files. Beside each stream
`<name>.jsonl` it writes `<name>.log`, the log lines the stream must replay to. The streams under
`v0/`, `v1/`, `v2/` and `v3/` were recorded by earlier versions and are never re-recorded: they keep
the upcasters honest.

`gateway-claude-desktop` is a gateway session: Claude Desktop's profile in front of the screenshot
server, recorded by the same `Session` and `UpstreamTools` the gateway runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from fuseforks.agent import Agent, AgentSettings, TurnResult
from fuseforks.core.names import Language
from fuseforks.demo.offline import CAMERA_SERVER
from fuseforks.demo.scenarios import DEMO_SCENARIOS, REQUEST
from fuseforks.engine.session import Session, SessionSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock
from fuseforks.gateway.profiles import profile_for
from fuseforks.gateway.upstream import UpstreamTools
from fuseforks.mcp import StdioServer
from fuseforks.mcp.catalog import Catalog
from fuseforks.mcp.hub import ToolHub
from fuseforks.projections.log import turn_log
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.jsonl import write_stream
from fuseforks.stores.memory import MemoryStore
from fuseforks.wires.http import RetryPolicy

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
RIG = Path(__file__).parent / "engine" / "servers" / "rig.py"
CAMERA = StdioServer(name=CAMERA_SERVER, command=sys.executable, args=["-m", "fuseforks.demo.camera"])
RIG_SERVER = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
SHOTS = StdioServer(name="shots", command=sys.executable,
                    args=["-m", "tests.gateway.servers.screenshots"],
                    cwd=str(REPLAYS.parent))


async def record(name: str, server: StdioServer, script: Script, wire: str, model: str, *,
                 language: Language = "en", max_rounds: int = 8) -> TurnResult:
    async with run_simulator(script=script) as sim, Agent(
        wire=wire, model=model, base_url=sim.base_urls[wire], api_key="sk-replay",
        mcp=[server], db=MemoryStore(), log=None, settings=AgentSettings(
            language=language, max_rounds=max_rounds, name="replay",
            retry=RetryPolicy(base_delay=0.01, max_delay=0.02)),
        clock=FixedClock("2026-11-30T00:00:00.000Z", step_ms=10),
    ) as agent:
        result = await agent.run(REQUEST[language], turn_id=name, conversation=f"conv-{name}")
    save(name, result.events)
    return result


def save(name: str, history: list[Envelope], folder: Path = REPLAYS) -> None:
    with open(folder / f"{name}.jsonl", "wb") as out:
        write_stream(history, out)
    lines = turn_log(history)
    (folder / f"{name}.log").write_text("".join(f"{line}\n" for line in lines))


async def record_session(name: str) -> None:
    """A Claude Desktop session through the gateway: two screenshots fitted into its megabyte, a
    small JPEG passed through, a tool that does not exist."""
    profile = profile_for("claude-desktop", "claude-ai", environ={})
    store = MemoryStore()

    async def publish(batch: Sequence[Envelope]) -> None:
        store.append(batch)

    async with ToolHub([SHOTS]) as hub:
        tools = UpstreamTools(hub, Catalog(hub), "prefixed", profile.limits,
                              profile.result_limits)
        session = Session(SessionSpec(agent="gateway", client="claude-ai", client_version="0.14.10",
                                      transport="stdio", profile=profile.name,
                                      limits=profile.limits, result_limits=profile.result_limits),
                          tools, session_id=name, publish=publish,
                          clock=FixedClock("2026-11-30T00:00:00.000Z", step_ms=10))
        await session.start()
        for number, tool in enumerate(("shots__both", "shots__small", "shots__nothing"), 1):
            await session.call(f"call-{number}", tool, {})
        await session.end("closed")
    save(name, store.read(name))


async def main() -> None:
    REPLAYS.mkdir(exist_ok=True)
    camera = Script(call_tools=(f"{CAMERA_SERVER}__live_view_image",))
    for scenario in DEMO_SCENARIOS:
        await record(f"p4-{scenario.name}", CAMERA, camera, scenario.wire, scenario.model)
    await record("cap-at-20", RIG_SERVER, Script(call_tools=("rig__frame",), rounds=21),
                 "anthropic", "claude-sonnet-5-5", max_rounds=30)
    await record("repeat-stop", RIG_SERVER, Script(call_tools=("rig__still",), rounds=4),
                 "gemini", "gemini-3.8-flash")
    await record("dropped-every-reason", RIG_SERVER, Script(call_tools=("rig__mixed",)),
                 "openai-compat", "gemini-3.5-flash-lite")
    await record_session("gateway-claude-desktop")


if __name__ == "__main__":
    anyio.run(main)
