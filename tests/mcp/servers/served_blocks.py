"""An MCP server whose one tool answers with whatever content a test wrote for it.

`blocks` returns the MCP content blocks (JSON, as on the wire) in the file named by the
`SERVED_BLOCKS` environment variable, read afresh on every call: a property test writes each
generated result there, then calls the tool through the engine or the gateway. Run over stdio.
"""

from __future__ import annotations

import json
import os

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult

server = MCPServer("served", log_level="WARNING")


@server.tool()
def blocks() -> CallToolResult:
    """The content the test wrote."""
    with open(os.environ["SERVED_BLOCKS"], encoding="utf-8") as stream:
        return CallToolResult.model_validate(json.load(stream))


if __name__ == "__main__":
    server.run()
