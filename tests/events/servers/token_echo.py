"""A real MCP server whose tool tells what its token is, as a careless tool might."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("token", log_level="WARNING")


@server.tool()
def whoami() -> str:
    """Say who this server is."""
    return f"logged in with token {os.environ['CAM_TOKEN']}"


if __name__ == "__main__":
    server.run()
