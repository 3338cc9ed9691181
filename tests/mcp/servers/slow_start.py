"""A real MCP server that takes SLOW_START_SECONDS (default 2) to start, as a server loading a
model or waiting for a device does; then it answers `ping`."""

from __future__ import annotations

import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("slow", log_level="WARNING")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    time.sleep(float(os.environ.get("SLOW_START_SECONDS", "2")))
    server.run()
