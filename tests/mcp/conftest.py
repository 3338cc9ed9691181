"""Real MCP server processes for the tool-layer tests: stdio configs, streamable HTTP servers and
HTTP+SSE servers (the older transport).

HTTP servers are started once per module with `subprocess.Popen` on a free 127.0.0.1 port. A hub
that several tests share runs inside one background task (`hosted_hub`), because the SDK's client
is built of anyio task groups that must be entered and left by the same task.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest

from fuseforks.mcp import HttpServer, StdioServer, ToolHub
from tests.helpers import processes
from tests.helpers.ports import free_port

SERVERS = Path(__file__).parent / "servers"
REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def stdio(name: str, script: str, env: dict[str, str] | None = None) -> StdioServer:
    """A stdio config running `tests/mcp/servers/<script>` with this interpreter."""
    return StdioServer(name=name, command=PYTHON, args=[str(SERVERS / script)], env=env or {})


def camera_stdio(name: str = "cam") -> StdioServer:
    return StdioServer(
        name=name, command=PYTHON, args=["-m", "fuseforks.demo.camera"], cwd=str(REPO)
    )


@contextmanager
def http_server(
    args: list[str],
    startup_seconds: float = 20.0,
    *,
    transport: str = "http",
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Run `python ARGS --http --port N` (or `--sse`) and yield its MCP endpoint (`/mcp`, or
    `/sse` for the SSE transport) once the port accepts."""
    port = free_port()
    process = processes.spawn(
        [PYTHON, *args, f"--{transport}", "--port", str(port)],
        cwd=REPO,
        env={**os.environ, **env} if env else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(process, port, startup_seconds, str(args))
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        processes.stop(process, 5)


def wait_listening(process: subprocess.Popen[bytes], port: int, seconds: float, what: str) -> None:
    """Return once `process` accepts connections on 127.0.0.1:`port`; raise if it exits first."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not listen on {port}") from None
            time.sleep(0.05)


def http(name: str, url: str) -> HttpServer:
    return HttpServer(name=name, url=url)


def sse(name: str, url: str) -> HttpServer:
    return HttpServer(name=name, url=url, transport="sse")


@asynccontextmanager
async def hosted_hub(hub: ToolHub) -> AsyncIterator[ToolHub]:
    """Enter and leave `hub` in one dedicated task so fixtures may span several tests."""
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    release = asyncio.Event()

    async def host() -> None:
        try:
            async with hub:
                ready.set_result(None)
                await release.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    task = asyncio.create_task(host())
    await ready
    try:
        yield hub
    finally:
        release.set()
        await task


def environ_without(*names: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}


@pytest.fixture(scope="session")
def reference_bin() -> Path:
    """The npm reference servers' `.bin` folder (`tests/helpers/npm.py`)."""
    from tests.helpers.npm import npm_bin

    return npm_bin()
