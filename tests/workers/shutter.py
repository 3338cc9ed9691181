"""The demo camera with a shutter counted across processes: every frame taken adds a line to
the file `SHUTTER_COUNT` names, whichever worker's camera took it, and a frame is handed back
only once the file `SHUTTER_GATE` names exists — so a test decides when a tool result reaches
the worker (and can restart a server in between). A tool run twice shows as two lines.

    SHUTTER_COUNT=/tmp/shots SHUTTER_GATE=/tmp/open python tests/workers/shutter.py
"""

from __future__ import annotations

import base64
import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent

from fuseforks.demo.camera import frame_text, render_frame

COUNT = anyio.Path(os.environ.get("SHUTTER_COUNT", "shutter.count"))
GATE = anyio.Path(os.environ.get("SHUTTER_GATE", "shutter.gate"))

server = MCPServer("fuseforks-test-shutter", log_level="WARNING")


@server.tool()
async def live_view_image() -> CallToolResult:
    """Take one frame of the live view: a 640x424 JPEG and a JSON line with its size and seq."""
    async with await COUNT.open("a") as count:
        await count.write(f"{os.getpid()}\n")
    seq = len((await COUNT.read_text()).splitlines())
    while not await GATE.exists():  # noqa: ASYNC110 - the gate is a file another process creates
        await anyio.sleep(0.05)
    jpeg = render_frame(seq)
    return CallToolResult(content=[
        ImageContent(data=base64.b64encode(jpeg).decode("ascii"), mime_type="image/jpeg"),
        TextContent(text=frame_text(seq, jpeg))])


if __name__ == "__main__":
    server.run()
