"""What a real MCP server process costs against the same server in-process.

Side by side in one run, on the demo camera server:
- start to first result: `ToolHub` spawning `python -m fuseforks.demo.camera` over stdio (process
  start, imports, handshake, tools/list, first call) against `mcp.Client(server_instance)` in-process;
- per call: `hub.call` over stdio (SDK round trip plus rendering the tool output) against the raw
  in-process `client.call_tool`, for the text-only tool and for the image tool; the raw stdio
  `call_tool` is shown too so the hub's own share is visible;
- the same per-call figure over streamable HTTP on 127.0.0.1.
Medians are reported (the machine is shared), each side interleaved with the other.
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import anyio
from mcp import Client

from fuseforks.demo.camera import build_server
from fuseforks.mcp import HttpServer, StdioServer, ToolHub
from tests.mcp.conftest import REPO, http_server

STARTS = 3
CALLS = 60
CAMERA = StdioServer(
    name="cam", command=sys.executable, args=["-m", "fuseforks.demo.camera"], cwd=str(REPO)
)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    """Seconds one awaited call takes."""
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


async def start_stdio() -> tuple[float, float]:
    """Seconds to the first result, and to the end of the shutdown that follows."""
    start = time.perf_counter()
    async with ToolHub([CAMERA]) as hub:
        output = await hub.call("cam__live_view_image", {}, "en")
        first = time.perf_counter() - start
        assert output.fault is None and len(output.images) == 1
    return first, time.perf_counter() - start - first


async def start_in_process() -> tuple[float, float]:
    start = time.perf_counter()
    async with Client(build_server()) as client:
        result = await client.call_tool("live_view_image", {})
        first = time.perf_counter() - start
        assert len(result.content) == 2
    return first, time.perf_counter() - start - first


async def bench_start() -> None:
    stdio, local = [], []
    for _ in range(STARTS):
        stdio.append(await start_stdio())
        local.append(await start_in_process())
    over, inside = (statistics.median(t[0] for t in runs) for runs in (stdio, local))
    print(f"start to first result   stdio {ms(over)}   in-process {ms(inside)}   "
          f"ratio {over / inside:7.1f}x")
    over, inside = (statistics.median(t[1] for t in runs) for runs in (stdio, local))
    print(f"shutdown after it       stdio {ms(over)}   in-process {ms(inside)}")


async def per_call(hub: ToolHub, client: Client, raw: Client | None, tool: str) -> None:
    hub_times: list[float] = []
    local_times: list[float] = []
    raw_times: list[float] = []
    for _ in range(CALLS):
        hub_times.append(await timed(lambda: hub.call(f"cam__{tool}", {}, "en")))
        local_times.append(await timed(lambda: client.call_tool(tool, {})))
        if raw is not None:
            raw_times.append(await timed(lambda: raw.call_tool(tool, {})))
    hub_ms, local_ms = statistics.median(hub_times), statistics.median(local_times)
    line = (f"  {tool:<16} hub {ms(hub_ms)}   in-process {ms(local_ms)}   "
            f"ratio {hub_ms / local_ms:6.1f}x")
    if raw_times:
        line += f"   (raw SDK stdio call {ms(statistics.median(raw_times))})"
    print(line)


async def bench_calls() -> None:
    from mcp import StdioServerParameters

    params = StdioServerParameters(command=CAMERA.command, args=CAMERA.args, cwd=CAMERA.cwd)
    print(f"per call over stdio (median of {CALLS})")
    async with ToolHub([CAMERA]) as hub, Client(build_server()) as local, Client(params) as raw:
        for tool in ("camera_status", "live_view_image"):
            await per_call(hub, local, raw, tool)
    with http_server(["-m", "fuseforks.demo.camera"]) as url:
        print(f"per call over streamable HTTP on 127.0.0.1 (median of {CALLS})")
        async with (
            ToolHub([HttpServer(name="cam", url=url)]) as hub,
            Client(build_server()) as local,
        ):
            for tool in ("camera_status", "live_view_image"):
                await per_call(hub, local, None, tool)


async def run() -> None:
    await bench_start()
    await bench_calls()


def main() -> None:
    logging.getLogger("httpx2").setLevel(logging.WARNING)  # one INFO line per request otherwise
    anyio.run(run)


if __name__ == "__main__":
    main()
