"""Real gateways for the tests: `fuseforks gateway` processes in front of real MCP servers, and
clients that reach them over stdio or streamable HTTP.

Every process is leashed to the test run (`tests/helpers/processes.py`): a stdio gateway is
started by the client library itself, through the launcher; an HTTP gateway by `spawn`. An HTTP
gateway is used once it says where it listens (the line on stderr after its start line), never
after a sleep.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

from fuseforks.events.codec import Envelope
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
MCP_SERVERS = REPO / "tests" / "mcp" / "servers"


def camera() -> dict[str, Any]:
    return {"command": PYTHON, "args": ["-m", "fuseforks.demo.camera"], "cwd": str(REPO)}


def blocks() -> dict[str, Any]:
    """The server whose tools return every kind of block (`tests/gateway/servers/blocks.py`)."""
    return {"command": PYTHON, "args": ["-m", "tests.gateway.servers.blocks"], "cwd": str(REPO)}


def shots(env: dict[str, str] | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": PYTHON,
                             "args": ["-m", "tests.gateway.servers.screenshots"],
                             "cwd": str(REPO)}
    if env:
        entry["env"] = env
    return entry


def misbehaving(script: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One of the tool layer's misbehaving servers (`tests/mcp/servers`)."""
    entry: dict[str, Any] = {"command": PYTHON, "args": [str(MCP_SERVERS / script)]}
    if env:
        entry["env"] = env
    return entry


def write_config(folder: Path, **servers: dict[str, Any]) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def gateway_command(config: Path, *options: str) -> list[str]:
    return [PYTHON, "-m", "fuseforks", "gateway", "--config", str(config), *options]


@asynccontextmanager
async def stdio_gateway(config: Path, *options: str, client: str = "test-client",
                        version: str = "1.0", mode: str = "auto", errlog: TextIO | None = None,
                        **kwargs: Any) -> AsyncIterator[Client]:
    """An SDK client connected to a gateway it launched over stdio, as a desktop client does;
    the gateway's stderr goes to `errlog` (a file) when given."""
    command = processes.leashed(gateway_command(config, *options))
    parameters = StdioServerParameters(command=command[0], args=command[1:], cwd=str(REPO),
                                       env=dict(os.environ))
    server = parameters if errlog is None else stdio_client(parameters, errlog=errlog)
    async with Client(server, client_info=Implementation(name=client, version=version),
                      mode=mode, **kwargs) as session:
        yield session


class HttpGateway:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def stop(self, signal: int) -> int:
        self.process.send_signal(signal)
        return self.process.wait(timeout=120)


@contextmanager
def http_gateway(config: Path, *options: str, env: dict[str, str] | None = None,
                 ) -> Iterator[HttpGateway]:
    """A gateway serving streamable HTTP on a port of 127.0.0.1 the system chose."""
    process = processes.spawn(
        gateway_command(config, "--http", "127.0.0.1:0", *options), cwd=REPO,
        env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].strip()
                break
        else:
            raise AssertionError(f"the gateway exited ({process.wait()}) without listening")
        yield HttpGateway(process, url)
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=120)


def recorded(db: Path) -> list[list[Envelope]]:
    """Every session (and turn) of the store, oldest first."""
    with SqliteStore(db, read_only=True) as store:
        return [store.read(info.turn_id) for info in store.turns()]


async def wait_for(condition: Any, what: str) -> None:
    """Until `condition()` holds: another process writes what the test waits for."""
    with anyio.fail_after(120, shield=False):
        while not condition():  # noqa: ASYNC110 - a file another process writes
            await anyio.sleep(0.05)
