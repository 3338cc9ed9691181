"""Engine overhead per round: the time a round costs outside the provider, the tools and
normalization — recording and folding events, building the request from state, the cap.

The ports answer instantly (a scripted model, a tool that hands back an already-normalized
640x424 JPEG), so what is timed is the engine alone — including its write-ahead commits: two per
round (before the tool calls, before the next request), each one SQLite transaction in a real
file (WAL, synchronous=NORMAL), as `fuseforks run` does. The same run with the in-memory store
separates the engine's own work from the store's. Each turn runs 20 tool rounds, so later
rounds carry up to 20 images and the cap works every round from the 21st image on (30 rounds).
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from PIL import Image

from fuseforks.bus.bus import Bus
from fuseforks.bus.subscribers import StoreWriter
from fuseforks.core.canonical import ChatRequest, ChatResponse, ToolCall, Usage
from fuseforks.core.names import Placement, WireName
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.types import ToolSpecRecord
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import NormalizedImage
from fuseforks.images.vault import ImageVault
from fuseforks.ports.tools import ToolOutput
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import EventStore

ROUNDS = 30
TURNS = 20


def frame(n: int) -> NormalizedImage:
    image = Image.new("RGB", (640, 424), (n * 7 % 256, 90, 200))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    result = normalize_image(out.getvalue())
    assert isinstance(result, NormalizedImage)
    return result


class ScriptedModel:
    wire: WireName = "anthropic"
    model, endpoint_host = "bench", "127.0.0.1"
    placement: Placement = "native"

    def __init__(self, clock: list[float], rounds: int = ROUNDS) -> None:
        self.calls = 0
        self.clock = clock
        self.rounds = rounds

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: Any, *,
                   on_text: Any = None) -> ChatResponse:
        self.clock.append(time.perf_counter())
        self.calls += 1
        calls = [] if self.calls > self.rounds else [ToolCall(id=f"c{self.calls}", name="cam__frame")]
        response = ChatResponse(text="done" if not calls else "", tool_calls=calls,
                                usage=Usage(), stop_reason="tool_use" if calls else "end_turn",
                                raw_model="bench")
        self.clock.append(time.perf_counter())
        return response


class InstantCamera:
    def __init__(self, frames: list[NormalizedImage]) -> None:
        self.frames = frames
        self.n = 0

    def tool_specs(self) -> list[ToolSpecRecord]:
        return [ToolSpecRecord(name="cam__frame", description="one frame")]

    def server_of(self, name: str) -> str:
        return "cam"

    async def call(self, name: str, arguments: dict[str, Any], language: str) -> ToolOutput:
        self.n += 1
        image = self.frames[self.n % len(self.frames)]
        return ToolOutput(text=f'{{"seq":{self.n}}}', images=[image])


async def one_turn(frames: list[NormalizedImage], bus: Bus) -> list[float]:
    stamps: list[float] = []
    turn = Turn(TurnSpec(agent="bench", request="watch", max_rounds=ROUNDS + 1),
                ScriptedModel(stamps), InstantCamera(frames), publish=bus.publish)
    await turn.run()
    # Between the end of one model call and the start of the next is one round of engine work
    # (the instant tool call included, which costs microseconds).
    return [stamps[i + 1] - stamps[i] for i in range(1, len(stamps) - 1, 2)]


async def run(store: EventStore) -> list[float]:
    frames = [frame(n) for n in range(40)]
    per_round: list[float] = []
    async with Bus([], required=[StoreWriter(store)]) as bus:
        for _ in range(TURNS):
            per_round += await one_turn(frames, bus)
    return per_round


def report(label: str, per_round: list[float]) -> None:
    ms = sorted(t * 1000 for t in per_round)
    print(f"  {label:<28} median {statistics.median(ms):.3f} ms   p90 {ms[int(len(ms) * 0.9)]:.3f} ms"
          f"   max {ms[-1]:.3f} ms")


def main() -> None:
    print(f"engine overhead per round, {TURNS} turns x {ROUNDS} rounds (1 image per round, cap 20),"
          " write-ahead commits included (goal: median <= 2 ms with SQLite):")
    with tempfile.TemporaryDirectory() as folder, SqliteStore(Path(folder) / "bench.db") as store:
        report("SQLite store (real file)", anyio.run(run, store))
    report("in-memory store", anyio.run(run, MemoryStore()))


if __name__ == "__main__":
    main()
