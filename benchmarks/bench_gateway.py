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

   Within each call through the session, the time spent in the upstream call and in the image
   pipeline (`render_tool_output_async`: normalize, fit, render) is taken apart, so the rest —
   recording, the cap, the reply's sizes — is measured call by call, not as the difference of
   two noisy medians.

Cases: pass-through (the demo camera's 640x424 JPEG, sent as it is; goal: at most 1.15 times the
direct call) and resizing (the screenshot server's 3840x2160 PNG, re-encoded to 1568 px under
Claude Desktop's profile; goal: the gateway's work beyond the image pipeline's at most 2 ms; the
pipeline is the one `bench_images` holds against its floor).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from fuseforks.bus.bus import Bus
from fuseforks.bus.subscribers import StoreWriter
from fuseforks.engine.session import Session, SessionSpec
from fuseforks.gateway import upstream as gateway_upstream
from fuseforks.gateway.profiles import profile_for
from fuseforks.gateway.upstream import UpstreamTools
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.mcp.catalog import Catalog
from fuseforks.stores.sqlite import SqliteStore
from tests.gateway.conftest import REPO, camera, shots, write_config

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


class Stopwatch:
    """Seconds spent inside one wrapped coroutine function, per call, in order."""

    def __init__(self) -> None:
        self.spent: list[float] = []

    def wrap(self, function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                self.spent.append(time.perf_counter() - start)

        return timed


class TimedHub:
    """A hub whose upstream calls are timed; everything else is the hub's."""

    def __init__(self, hub: ToolHub, watch: Stopwatch) -> None:
        self.hub = hub
        self.call_result = watch.wrap(hub.call_result)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hub, name)


async def own_work(folder: Path, server: StdioServer, tool: str,
                   profile_name: str) -> tuple[float, float, float, float]:
    """Medians: the upstream call alone, the same call through a recorded session, and within
    the session's calls the image pipeline and the rest."""
    profile = profile_for(profile_name, "bench")
    spec = SessionSpec(agent="gateway", client="bench", transport="stdio", profile=profile.name,
                       limits=profile.limits, result_limits=profile.result_limits)
    store = SqliteStore(folder / f"own-{tool}.db")
    upstream, pipeline = Stopwatch(), Stopwatch()
    real = gateway_upstream.plan_for_client
    try:
        async with ToolHub([server]) as hub, Bus([], required=[StoreWriter(store)]) as bus:
            timed: Any = TimedHub(hub, upstream)
            session = Session(spec, UpstreamTools(timed, Catalog(hub), "prefixed",
                                                  profile.limits, profile.result_limits),
                              publish=bus.publish)
            await session.start()
            name = f"{server.name}__{tool}"
            numbers = iter(range(10**9))
            await hub.call_result(name, {})
            whole: list[float] = []

            async def through() -> None:
                start = time.perf_counter()
                await session.call(f"c{next(numbers)}", name, {})
                whole.append(time.perf_counter() - start)

            gateway_upstream.plan_for_client = pipeline.wrap(real)  # type: ignore[assignment]
            alone, _ = await medians(CALLS, lambda: hub.call_result(name, {}), through)
    finally:
        gateway_upstream.plan_for_client = real
        store.close()
    rest = [w - u - p for w, u, p in zip(whole, upstream.spent, pipeline.spent, strict=True)]
    return (alone, statistics.median(whole), statistics.median(pipeline.spent),
            statistics.median(rest))


def report(alone: float, session: float, pipeline: float, rest: float) -> None:
    print(f"  the upstream call alone                 {ms(alone)}")
    print(f"  the same through the gateway's session  {ms(session)}  "
          f"({session / alone:.2f}x, +{(session - alone) * 1000:.2f} ms)")
    print(f"    of which the image pipeline           {ms(pipeline)}")
    print(f"    and the rest (record, cap, reply)     {ms(rest)}")


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="ffgw-bench-") as temporary:
        folder = Path(temporary)
        print(f"pass-through: the camera's 640x424 JPEG (api-limits), median of {CALLS}")
        await end_to_end(folder, "cam", camera(), "live_view_image", "api-limits")
        cam = StdioServer(name="cam", command=sys.executable,
                          args=["-m", "fuseforks.demo.camera"], cwd=str(REPO))
        alone, session, pipeline, rest = await own_work(folder, cam, "live_view_image",
                                                        "api-limits")
        report(alone, session, pipeline, rest)
        ratio = session / alone
        print(f"  ratio {ratio:.2f} (goal <= {PASS_THROUGH_GOAL}): "
              f"{'ok' if ratio <= PASS_THROUGH_GOAL else 'MISSED'}")

        print(f"resizing: the 3840x2160 PNG to 1568 px (claude-desktop), median of {CALLS}")
        await end_to_end(folder, "shots", shots(), "screen", "claude-desktop")
        server = StdioServer(name="shots", command=sys.executable, cwd=str(REPO),
                             args=["-m", "tests.gateway.servers.screenshots"])
        alone, session, pipeline, rest = await own_work(folder, server, "screen",
                                                        "claude-desktop")
        report(alone, session, pipeline, rest)
        print(f"  the rest {rest * 1000:.2f} ms (goal <= {RESIZE_GOAL_MS} ms): "
              f"{'ok' if rest * 1000 <= RESIZE_GOAL_MS else 'MISSED'}")


def main() -> None:
    anyio.run(run)


if __name__ == "__main__":
    main()
