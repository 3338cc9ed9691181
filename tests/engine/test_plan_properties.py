"""Properties of a turn over generated tool results, on every wire, through real parts: an
`Agent` with a real MCP server that answers with whatever the test wrote, and the provider
simulator over HTTP. For every result: the turn does not fail; the images the model gets — read
out of the HTTP request the simulator received — are exactly the digests the record says the
request carried; every image the server sent for the model reaches it or is named in a note the
model reads; the engine's limits hold; no base64 run reaches a text the model reads."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings

from fuseforks.agent import Agent, AgentSettings
from fuseforks.core.media import ENGINE_LIMITS
from fuseforks.core.names import WIRE_NAMES
from fuseforks.events.types import RequestSent
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.simulator import Script, Simulator, run_simulator
from fuseforks.stores.memory import MemoryStore
from tests.helpers.results import check_delivery, for_user_only, is_image, results

SERVED = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "served_blocks.py"
MODELS = {"anthropic": "claude-sim", "gemini": "gemini-3-sim"}


def _split(body: Any) -> tuple[list[bytes], list[str]]:
    """The pictures a request carries, and every other string in it."""
    pictures: list[bytes] = []
    strings: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "base64" and "data" in value:  # Anthropic's image source
                pictures.append(base64.b64decode(value["data"]))
                return
            source = value.get("source")
            if "format" in value and isinstance(source, dict) and "bytes" in source:  # Bedrock
                pictures.append(base64.b64decode(source["bytes"]))
                return
            if "inlineData" in value:  # Gemini
                pictures.append(base64.b64decode(value["inlineData"]["data"]))
            for key, item in value.items():
                if key != "inlineData":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            if value.startswith("data:image/") and ";base64," in value:  # OpenAI's shapes
                pictures.append(base64.b64decode(value.split(",", 1)[1]))
            else:
                strings.append(value)

    walk(body)
    return pictures, strings


class Rig:
    def __init__(self, portal: BlockingPortal, agent: Agent, simulator: Simulator,
                 served: Path) -> None:
        self.portal, self.agent, self.simulator, self.served = portal, agent, simulator, served


@contextmanager
def rig(folder: Path, wire: str) -> Iterator[Rig]:
    served = folder / "served.json"
    server = StdioServer(name="served", command=sys.executable, args=[str(SERVED)],
                         env={"SERVED_BLOCKS": str(served)})

    with start_blocking_portal() as portal:
        simulator_cm = portal.wrap_async_context_manager(
            run_simulator(script=Script(call_tools=("served__blocks",)), any_model=True))
        with simulator_cm as simulator, portal.wrap_async_context_manager(
                ToolHub([server])) as hub, portal.wrap_async_context_manager(Agent(
                    wire=wire, model=MODELS.get(wire, "sim-vision-1"),
                    base_url=simulator.base_urls[wire], api_key="sk-test", tools=hub,
                    db=MemoryStore(), log=None, settings=AgentSettings(name="p"))) as agent:
            yield Rig(portal, agent, simulator, served)


def check(rig: Rig, result: dict[str, Any]) -> None:
    rig.served.write_text(json.dumps(result))
    before = len(rig.simulator.received)
    turn = rig.portal.call(rig.agent.run, "Look.")
    assert turn.stop == "answered", turn.error
    answering = [e.event for e in turn.events if isinstance(e.event, RequestSent)][1]
    body = msgspec.json.decode(rig.simulator.received[before + 1].body)
    pictures, strings = _split(body)
    assert sorted(hashlib.sha256(p).hexdigest() for p in pictures) == sorted(
        image.digest for image in answering.images)
    offered = [b for b in result["content"] if is_image(b) and not for_user_only(b)]
    check_delivery(offered, pictures, strings, ENGINE_LIMITS)


@pytest.mark.parametrize("wire", WIRE_NAMES)
def test_what_the_model_gets_is_what_the_record_says(tmp_path: Path, wire: str) -> None:
    with rig(tmp_path, wire) as running:

        @settings(max_examples=15, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(results())
        def holds(result: dict[str, Any]) -> None:
            check(running, result)

        holds()
