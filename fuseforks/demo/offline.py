"""The offline main job: the demo scenarios against real local processes.

The provider simulator runs as its own process on a loopback port and the demo camera as an MCP
server over stdio — the same sockets, pipes and SDKs a live turn uses, with nothing leaving the
machine. Every turn is an `Agent` turn, recorded into the SQLite store and `fuseforks.log`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import anyio
import msgspec

from fuseforks.agent import Agent, AgentSettings, TurnResult
from fuseforks.core.errors import ClusterError
from fuseforks.core.leash import leashed
from fuseforks.core.names import Language
from fuseforks.demo.camera import frame_colours
from fuseforks.demo.scenarios import DEMO_SCENARIOS, REQUEST, Scenario
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ToolResultRecorded
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.projections.deliveries import deliveries, received
from fuseforks.projections.display import tool_displays
from fuseforks.projections.log import turn_log
from fuseforks.projections.summary import turn_summary
from fuseforks.projections.words import images_shown
from fuseforks.stores.open import Target, open_store
from fuseforks.wires.http import RetryPolicy
from fuseforks.wires.registry import get_wire

CAMERA_SERVER = "nik"
CAMERA_TOOL = f"{CAMERA_SERVER}__live_view_image"
DEMO_KEY = "sk-fuseforks-demo-offline"


class ScenarioOutcome(msgspec.Struct, frozen=True, kw_only=True):
    scenario: Scenario
    result: TurnResult
    placement: str
    images: str
    """The turn's images as every list shows them (`images_shown`): how many its requests sent,
    and what became of them when not all reached the model."""
    log_lines: list[str]
    displays: list[str]
    truth: str
    """What the camera's frame really shows (from its `seq` and the documented palette)."""


def camera_truth(events: Sequence[Envelope]) -> str:
    for envelope in events:
        event = envelope.event
        if isinstance(event, ToolResultRecorded) and event.name == CAMERA_TOOL:
            seq = msgspec.json.decode(event.body.split("\n")[0]).get("seq")
            if isinstance(seq, int):
                left, right = frame_colours(seq)
                return f"left half {left}, right half {right}"
    return "-"


@contextmanager
def simulator_process(record_dir: Path | None) -> Iterator[str]:
    """Start `python -m fuseforks simulator --port 0` and yield its base URL."""
    command = [sys.executable, "-m", "fuseforks", "simulator", "--port", "0",
               "--call", CAMERA_TOOL]
    if record_dir is not None:
        command += ["--record-requests", str(record_dir)]
    process = subprocess.Popen(leashed(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        prefix = "simulator: listening on "
        if not first.startswith(prefix):
            error = process.stderr.read() if process.stderr else ""
            raise ClusterError(f"the simulator did not start: {first!r} {error[-500:]}")
        yield first[len(prefix):]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def delivered_placement(events: Sequence[Envelope]) -> str:
    """Where the images of the last answered request that carried any sat; `-` if none did."""
    answered = received(deliveries(events))
    return answered[-1].sent.images[0].placement if answered else "-"


async def run_scenarios(db_path: Target, log_path: Path, record_dir: Path | None = None,
                        language: Language = "en",
                        scenarios: tuple[Scenario, ...] = DEMO_SCENARIOS,
                        api_key: str = DEMO_KEY) -> list[ScenarioOutcome]:
    """Each scenario is one `Agent` turn; the camera and the store are shared by all of them."""
    from fuseforks.simulator import WIRE_PREFIXES

    outcomes = []
    camera = StdioServer(name=CAMERA_SERVER, command=sys.executable,
                         args=["-m", "fuseforks.demo.camera"])
    with simulator_process(record_dir) as base_url, open_store(db_path) as store:
        async with ToolHub([camera]) as hub:
            for scenario in scenarios:
                local = get_wire(scenario.wire).local  # a local server is sent no key
                async with Agent(
                    wire=scenario.wire, model=scenario.model, api_key=None if local else api_key,
                    base_url=base_url + WIRE_PREFIXES[scenario.wire], tools=hub, db=store,
                    log=log_path, settings=AgentSettings(
                        language=language, name="demo",
                        retry=RetryPolicy(base_delay=0.05, max_delay=0.2)),
                ) as agent:
                    result = await agent.run(REQUEST[language])
                outcomes.append(ScenarioOutcome(
                    scenario=scenario, result=result,
                    placement=delivered_placement(result.events),
                    images=images_shown(turn_summary(result.events)),
                    log_lines=turn_log(result.events),
                    displays=[d.text for d in tool_displays(result.events)],
                    truth=camera_truth(result.events),
                ))
    return outcomes


def run(db_path: Target, log_path: Path, record_dir: Path | None, language: Language) -> list[ScenarioOutcome]:
    return anyio.run(run_scenarios, db_path, log_path, record_dir, language)
