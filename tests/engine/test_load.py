"""50 turns at once, with images, sharing one store: every event kept, no image bytes left behind."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import anyio

from fuseforks.bus.bus import Bus
from fuseforks.bus.subscribers import StoreWriter
from fuseforks.engine.turn import Turn, TurnOutcome, TurnSpec
from fuseforks.events.types import ImagesNormalized
from fuseforks.live import HubTools, LiveModel
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.wires.base import Endpoint
from tests.engine.rig import FAST, RIG

TURNS = 50


async def test_50_concurrent_turns_store_every_event_and_release_every_image(tmp_path) -> None:
    store = SqliteStore(tmp_path / "load.db")
    results: list[TurnOutcome] = []
    turns: list[Turn] = []
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    async with run_simulator(script=Script(call_tools=("rig__big",))) as sim, ToolHub([server]) as hub:
        tools = HubTools(hub)
        model = LiveModel("openai-responses", "gpt-6-sol",
                          Endpoint(base_url=sim.base_urls["openai-responses"], api_key="sk"),
                          policy=FAST)
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        async with Bus([], required=[StoreWriter(store)]) as bus:

            async def one(index: int) -> None:
                turn = Turn(TurnSpec(agent=f"agent_{index}", request="look"), model, tools,
                            publish=bus.publish)
                turns.append(turn)
                results.append(await turn.run())

            async with anyio.create_task_group() as group:
                for index in range(TURNS):
                    group.start_soon(one, index)
        await model.aclose()
        # The simulator keeps every request body for tests to read; it is the provider's
        # memory, not the engine's, so it is not counted.
        sim.received.clear()
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - baseline
        engine_owned = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, f"*/fuseforks/{part}/*")
             for part in ("engine", "events", "projections", "wires", "mcp", "images", "ports", "core",
                              "bus", "stores", "live")]
        )
        engine_left = sum(stat.size for stat in engine_owned.statistics("filename"))
        tracemalloc.stop()
    image_bytes = sum(m.size for r in results for e in r.history
                      if isinstance(e.event, ImagesNormalized) for m in e.event.images)
    assert len(results) == TURNS and all(r.stop == "answered" and r.answer for r in results)
    assert image_bytes > 30_000_000, "the load must carry real images to measure their release"
    assert all(len(t.vault) == 0 and t.vault.nbytes == 0 for t in turns)
    # What the engine allocated and still holds: the events of 50 turns, no pixels.
    assert engine_left < 1_000_000, f"engine code still holds {engine_left} bytes"
    # Everything, SDK and simulator buffers of the last frame or two included: bounded, not 50 MB.
    assert left < 10_000_000, f"{left} bytes still allocated after {image_bytes} image bytes"
    for result in results:
        stored = store.read(result.turn_id)
        assert stored == result.history
        assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert len(store.turns()) == TURNS
    store.close()
