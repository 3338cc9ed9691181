"""Records the streams in `replays/`: `python -m tests.replays_record` (run from the repository).

Each scenario runs the real engine against the provider simulator on loopback and a real MCP
server process, with a fixed clock so that re-recording gives stable files. Beside each stream
`<name>.jsonl` it writes `<name>.log`, the log lines the stream must replay to. The streams under
`v0/` and `v1/` were recorded by earlier versions and are never re-recorded: they keep the
upcasters honest.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from fuseforks.demo.offline import CAMERA_SERVER
from fuseforks.demo.scenarios import DEMO_SCENARIOS, REQUEST
from fuseforks.engine.turn import Turn, TurnOutcome, TurnSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock
from fuseforks.live import HubTools, LiveModel
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.jsonl import write_stream
from fuseforks.wires.base import Endpoint
from fuseforks.wires.http import RetryPolicy

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
RIG = Path(__file__).parent / "engine" / "servers" / "rig.py"
CAMERA = StdioServer(name=CAMERA_SERVER, command=sys.executable, args=["-m", "fuseforks.demo.camera"])
RIG_SERVER = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])


async def record(name: str, server: StdioServer, script: Script, wire: str, model: str, *,
                 language: str = "en", max_rounds: int = 8) -> TurnOutcome:
    async with run_simulator(script=script) as sim, ToolHub([server]) as hub:
        live = LiveModel(wire, model, Endpoint(base_url=sim.base_urls[wire], api_key="sk-replay"),
                         policy=RetryPolicy(base_delay=0.01, max_delay=0.02))
        try:
            spec = TurnSpec(agent="replay", request=REQUEST[language], language=language,
                            max_rounds=max_rounds)
            result = await Turn(spec, live, HubTools(hub), turn_id=name,
                                clock=FixedClock("2026-11-30T00:00:00.000Z", step_ms=10)).run()
        finally:
            await live.aclose()
    save(name, result.history)
    return result


def save(name: str, history: list[Envelope], folder: Path = REPLAYS) -> None:
    with open(folder / f"{name}.jsonl", "wb") as out:
        write_stream(history, out)
    lines = fold(evolve_log, LogState(), history).lines
    (folder / f"{name}.log").write_text("".join(f"{line}\n" for line in lines))


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


if __name__ == "__main__":
    anyio.run(main)
