"""A real MCP server offering 3,000 tools: a listing longer than a pipe holds (64 KiB), so a
reader that stops early (`| head -2`) leaves the writer with a broken pipe."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("many", log_level="WARNING")


def _tool(n: int) -> None:
    def tool() -> str:
        return str(n)

    server.add_tool(tool, name=f"tool_{n:04d}",
                    description=f"Tool number {n}, one of very many, each saying so at length.")


for number in range(3000):
    _tool(number)

if __name__ == "__main__":
    server.run()
