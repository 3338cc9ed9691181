"""A real MCP server whose tools misbehave on purpose: crash, hang, reject arguments, show env.

`hang` records its own cancellation in the file named by FAULTY_MARKER so a test can prove the
client's timeout cancelled the call on the server, not just stopped waiting for it.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

server = MCPServer("faulty", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers (invalid arguments are a tool error)."""
    return str(a + b)


@server.tool()
def strict(fps: int) -> str:
    """Refuse with a JSON-RPC error (not an isError result) outside 1-30 frames per second."""
    if not 1 <= fps <= 30:
        raise MCPError(code=INVALID_PARAMS, message="frame rate must be 1-30")
    return f"{fps} fps"


@server.tool()
def crash() -> str:
    """Exit the process in the middle of the call."""
    print("boom: simulated crash", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer; note a cancellation in FAULTY_MARKER."""
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        marker = os.environ.get("FAULTY_MARKER")
        if marker:  # synchronously: any await inside a cancelled scope is cancelled at once
            with open(marker, "w", encoding="utf-8") as stream:  # noqa: ASYNC230
                stream.write("cancelled")
        raise
    return "unreachable"


@server.tool()
def env_probe() -> str:
    """Names and values of a few environment variables, as compact JSON."""
    names = ("FUSEFORKS_SENTINEL_API_KEY", "FAULTY_GIVEN", "PATH", "HOME")
    return json.dumps({name: os.environ.get(name) for name in names}, sort_keys=True)


@server.tool()
def env_names() -> str:
    """Every environment variable name the server process has, sorted, as a JSON list."""
    return json.dumps(sorted(os.environ))


@server.tool()
def pid() -> str:
    """The server's process id (restarts change it)."""
    return str(os.getpid())


if __name__ == "__main__":
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    elif "--sse" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run("sse", host="127.0.0.1", port=port)
    else:
        server.run()
