"""A real MCP server whose tools take a while: they report progress, and one runs until it is
cancelled (over stdio).

- `count(steps)`: one progress notification per step (`step N`), then "counted";
- `hang()`: reports "started", then waits until the client cancels it;
- `was_cancelled()`: answers "cancelled" once a `hang` call has been cancelled.
"""

from __future__ import annotations

import asyncio

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("longrun", log_level="WARNING")
_cancelled = asyncio.Event()


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, saying so at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return "counted"


@server.tool()
async def hang(ctx: Context) -> str:
    """Runs until it is cancelled."""
    await ctx.report_progress(0, None, "started")
    try:
        await asyncio.Event().wait()
    finally:
        _cancelled.set()
    return "never"


@server.tool()
async def was_cancelled() -> str:
    """Answers once a `hang` call was cancelled."""
    await _cancelled.wait()
    return "cancelled"


if __name__ == "__main__":
    server.run()
