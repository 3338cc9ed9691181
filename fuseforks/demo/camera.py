"""A demo camera MCP server: the offline default's camera and the tests' real server.

`live_view_image` returns one 640x424 JPEG frame plus a compact JSON text block shaped like the one
a real camera app returns (`{"height":424,"jpeg_bytes":N,"seq":N,"width":640}`).
The scene is synthetic so a model's answer can be checked: the left half and the right half are
solid colours taken from `PALETTE`, and they move one step along the palette with every frame:

    frame seq n (1-based): left = PALETTE[(n - 1) % 4], right = PALETTE[n % 4]
    seq 1: red | green, seq 2: green | blue, seq 3: blue | yellow, seq 4: yellow | red, then again.

The frame is a baseline JPEG well inside the pass-through limits (long edge <= 1568, <= 2 MiB), so a
client that follows the image rules (docs/image-rules.md) delivers the server's bytes unchanged.

Run it over stdio (the default) or streamable HTTP on 127.0.0.1:

    python -m fuseforks.demo.camera
    python -m fuseforks.demo.camera --http --port 8765     # endpoint http://127.0.0.1:8765/mcp
"""

from __future__ import annotations

import argparse
import base64
import io
import itertools
import json
from collections.abc import Iterator

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

WIDTH = 640
HEIGHT = 424
FRAME_QUALITY = 85  # the camera's own setting, like any device's
PALETTE: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("red", (220, 40, 40)),
    ("green", (40, 170, 70)),
    ("blue", (40, 80, 220)),
    ("yellow", (235, 200, 40)),
)


def frame_colours(seq: int) -> tuple[str, str]:
    """Names of the (left, right) colours of frame `seq` (1-based)."""
    if seq < 1:
        raise ValueError(f"seq starts at 1, got {seq}")
    return PALETTE[(seq - 1) % len(PALETTE)][0], PALETTE[seq % len(PALETTE)][0]


def render_frame(seq: int) -> bytes:
    """The JPEG bytes of frame `seq`: deterministic for a given Pillow build."""
    left, right = frame_colours(seq)
    colours = dict(PALETTE)
    image = Image.new("RGB", (WIDTH, HEIGHT), colours[left])
    image.paste(colours[right], (WIDTH // 2, 0, WIDTH, HEIGHT))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=FRAME_QUALITY)
    return buffer.getvalue()


def frame_text(seq: int, jpeg: bytes) -> str:
    """The text block that goes with a frame: compact JSON, keys sorted."""
    body = {"height": HEIGHT, "jpeg_bytes": len(jpeg), "seq": seq, "width": WIDTH}
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def build_server(exposure: float = 0.0) -> MCPServer:
    """A fresh camera with its own frame counter (in-process benchmarks build one directly).

    `exposure`: seconds each frame takes, like a real camera's exposure and transfer."""
    server = MCPServer("fuseforks-demo-camera", version="0.1.0", log_level="WARNING")
    counter: Iterator[int] = itertools.count(1)
    taken: list[int] = []

    @server.tool()
    async def live_view_image() -> CallToolResult:
        """Take one frame of the live view: a 640x424 JPEG and a JSON line with its size and seq."""
        if exposure:
            await anyio.sleep(exposure)
        seq = next(counter)
        taken.append(seq)
        jpeg = render_frame(seq)
        return CallToolResult(
            content=[
                ImageContent(data=base64.b64encode(jpeg).decode("ascii"), mime_type="image/jpeg"),
                TextContent(text=frame_text(seq, jpeg)),
            ]
        )

    @server.tool()
    def camera_status() -> str:
        """Whether the camera is connected and how many frames it has taken (text only)."""
        status = {
            "connected": True,
            "frames_taken": len(taken),
            "live_view": True,
            "model": "fuseforks demo camera",
        }
        return json.dumps(status, sort_keys=True, separators=(",", ":"))

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m fuseforks.demo.camera",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (with --http)")
    parser.add_argument("--exposure", type=float, default=0.0,
                        help="seconds each frame takes (default 0)")
    args = parser.parse_args(argv)
    server = build_server(args.exposure)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run()


if __name__ == "__main__":
    main()
