"""A tool call through `fuseforks gateway` against the same call made directly.

Two views, medians, each side interleaved with the other (the machine is shared):

1. End to end, real processes over stdio with the SDK's client: the client calling the server
   directly, and the client calling the gateway that calls the server. The gateway is one more
   process on the path, so this includes a second MCP round trip (the SDK's framing, JSON and
   validation on both ends of it).
2. The gateway's own work, in one process: the upstream call alone (`ToolHub.call_result`, the
   hop the gateway makes) against the same call through the gateway's session (the image
   pipeline with the profile's limits, the reply, and the record written ahead to SQLite
   through the bus: two commits, the call before it starts and the result before it is
   returned).

Cases: pass-through (the demo camera's 640x424 JPEG, sent as it is; goal: at most 1.15 times the
direct call) and resizing (the screenshot server's 3840x2160 PNG, re-encoded to 1568 px under
Claude Desktop's profile; goal: the gateway's work beyond the image pipeline's at most 2 ms, the
pipeline measured on the same image in this process, the figure `bench_images` holds against its
floor).
"""

from __future__ import annotations

import base64
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from fuseforks.bus.bus import Bus
from fuseforks.bus.subscribers import StoreWriter
from fuseforks.engine.session import Session, SessionSpec
from fuseforks.gateway.profiles import profile_for
from fuseforks.gateway.relay import RelayTools
from fuseforks.images.normalize import normalize_result_images
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.stores.sqlite import SqliteStore
from tests.gateway.conftest import REPO, camera, shots, write_config
from tests.gateway.pictures import screen_png

CALLS = 40
PASS_THROUGH_GOAL = 1.15
RESIZE_GOAL_MS = 2.0


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def parameters(entry: dict[str, object]) -> StdioServerParameters:
    args = [str(a) for a in entry.get("args", [])]  # type: ignore[attr-defined]
    return StdioServerParameters(command=str(entry["command"]), args=args,
                                 cwd=str(entry.get("cwd", REPO)))


def through_gateway(config: Path, db: Path, *options: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, cwd=str(REPO), args=[
        "-m", "fuseforks", "gateway", "--config", str(config), "--db", str(db), *options])


async def medians(calls: int, *sides: Callable[[], Awaitable[object]]) -> list[float]:
    times: list[list[float]] = [[] for _ in sides]
    for _ in range(calls):
        for taken, call in zip(times, sides, strict=True):
            start = time.perf_counter()
            await call()
            taken.append(time.perf_counter() - start)
    return [statistics.median(taken) for taken in times]


async def end_to_end(folder: Path, name: str, entry: dict[str, object], tool: str,
                     profile: str) -> None:
    config = write_config(folder, **{name: entry})
    async with AsyncExitStack() as stack:
        direct = await stack.enter_async_context(Client(parameters(entry)))
        gateway = await stack.enter_async_context(Client(through_gateway(
            config, folder / f"{tool}.db", "--profile", profile)))
        for _ in range(2):  # warm both: imports, first results
            await direct.call_tool(tool, {})
            await gateway.call_tool(f"{name}__{tool}", {})
        alone, through = await medians(CALLS, lambda: direct.call_tool(tool, {}),
                                       lambda: gateway.call_tool(f"{name}__{tool}", {}))
    print(f"  end to end, client -> server          {ms(alone)}")
    print(f"  end to end, client -> gateway -> server {ms(through)}  "
          f"({through / alone:.2f}x, +{(through - alone) * 1000:.2f} ms)")


async def own_work(folder: Path, server: StdioServer, tool: str,
                   profile_name: str) -> tuple[float, float]:
    """Medians of the upstream call alone and of the same call through a recorded session."""
    profile = profile_for(profile_name, "bench")
    spec = SessionSpec(agent="gateway", client="bench", transport="stdio", profile=profile.name,
                       limits=profile.limits, result_limits=profile.result_limits)
    store = SqliteStore(folder / f"own-{tool}.db")
    try:
        async with ToolHub([server]) as hub, Bus([], required=[StoreWriter(store)]) as bus:
            tools = RelayTools(hub, "prefixed", profile.limits, profile.result_limits)
            session = Session(spec, tools, publish=bus.publish)
            await session.start()
            name = f"{server.name}__{tool}"
            calls = iter(range(10**9))
            await hub.call_result(name, {})
            return tuple(await medians(  # type: ignore[return-value]
                CALLS, lambda: hub.call_result(name, {}),
                lambda: session.call(f"c{next(calls)}", name, {})))
    finally:
        store.close()


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="ffgw-bench-") as temporary:
        folder = Path(temporary)
        print(f"pass-through: the camera's 640x424 JPEG (generic), median of {CALLS}")
        await end_to_end(folder, "cam", camera(), "live_view_image", "generic")
        cam = StdioServer(name="cam", command=sys.executable,
                          args=["-m", "fuseforks.demo.camera"], cwd=str(REPO))
        alone, session = await own_work(folder, cam, "live_view_image", "generic")
        ratio = session / alone
        print(f"  the upstream call alone               {ms(alone)}")
        print(f"  the same through the gateway's session {ms(session)}  (+"
              f"{(session - alone) * 1000:.2f} ms: pipeline, reply, two commits)")
        print(f"  ratio {ratio:.2f} (goal <= {PASS_THROUGH_GOAL}): "
              f"{'ok' if ratio <= PASS_THROUGH_GOAL else 'MISSED'}")

        print(f"resizing: the 3840x2160 PNG to 1568 px (claude-desktop), median of {CALLS}")
        await end_to_end(folder, "shots", shots(), "screen", "claude-desktop")
        block = base64.b64encode(screen_png()).decode()
        limits = profile_for("claude-desktop", "bench").limits
        pipeline = []
        for _ in range(9):
            start = time.perf_counter()
            normalize_result_images([block], limits)
            pipeline.append(time.perf_counter() - start)
        server = StdioServer(name="shots", command=sys.executable, cwd=str(REPO),
                             args=["-m", "tests.gateway.servers.screenshots"])
        alone, session = await own_work(folder, server, "screen", "claude-desktop")
        rest = session - alone - statistics.median(pipeline)
        print(f"  the upstream call alone               {ms(alone)}")
        print(f"  the same through the gateway's session {ms(session)}")
        print(f"  the image pipeline on that PNG        {ms(statistics.median(pipeline))}")
        print(f"  the gateway's work beyond it {rest * 1000:.2f} ms (goal <= {RESIZE_GOAL_MS} "
              f"ms): {'ok' if rest * 1000 <= RESIZE_GOAL_MS else 'MISSED'}")


def main() -> None:
    anyio.run(run)


if __name__ == "__main__":
    main()
