"""A real MCP server for the turn-engine tests: tools whose images change, repeat, or never come.

- `frame`: the same text every call, and a new image every call (its colours follow a counter);
- `still`: the same text and the same image every call (the RepeatGuard's control);
- `status`: text only — the tool that must behave exactly as in a text-only engine;
- `pair`: two images in one result (for a cap that cuts through a result).
"""

from __future__ import annotations

import base64
import io
import itertools

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

server = MCPServer("rig", log_level="WARNING")
_counter = itertools.count(1)
COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255)]
NAMES = ["red", "green", "blue", "yellow", "magenta"]


def colours(n: int) -> tuple[str, str]:
    """Names of the left and right halves of frame `n`."""
    return NAMES[n % 5], NAMES[(n + 2) % 5]


def jpeg(n: int) -> str:
    image = Image.new("RGB", (96, 64), COLOURS[n % len(COLOURS)])
    image.paste(COLOURS[(n + 2) % len(COLOURS)], (48, 0, 96, 64))
    # A tiny per-frame mark keeps every frame's bytes distinct even when colours repeat.
    image.putpixel((0, 0), (n % 256, n // 256 % 256, 7))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=95)
    return base64.b64encode(out.getvalue()).decode()


def image(n: int) -> ImageContent:
    return ImageContent(data=jpeg(n), mime_type="image/jpeg")


@server.tool()
def frame() -> CallToolResult:
    """One camera frame; the picture changes on every call."""
    return CallToolResult(content=[TextContent(text="frame"), image(next(_counter))])


@server.tool()
def still() -> CallToolResult:
    """One frame of a scene that never changes."""
    return CallToolResult(content=[TextContent(text="frame"), image(0)])


@server.tool()
def status() -> CallToolResult:
    """Camera status, text only."""
    return CallToolResult(content=[TextContent(text="ready")])


_BIG = Image.effect_noise((1400, 933), 60).convert("RGB")


@server.tool()
def big() -> CallToolResult:
    """A large noisy frame (about 1 MB as JPEG), different on every call."""
    n = next(_counter)
    picture = _BIG.copy()
    picture.putpixel((0, 0), (n % 256, n // 256 % 256, 9))
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=92)
    return CallToolResult(content=[TextContent(text="big"),
                                   ImageContent(data=base64.b64encode(out.getvalue()).decode(),
                                                mime_type="image/jpeg")])


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares its size and stops: a decompression bomb's business card."""
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)))


@server.tool()
def mixed() -> CallToolResult:
    """Images of every kind the normalizer drops, then five good frames (one too many)."""
    gif = io.BytesIO()
    Image.new("P", (8, 8)).save(gif, "GIF")
    blocks = [
        TextContent(text="mixed"),
        ImageContent(data=base64.b64encode(gif.getvalue()).decode(), mime_type="image/gif"),
        ImageContent(data="not base64 at all!", mime_type="image/jpeg"),
        ImageContent(data=base64.b64encode(_png_header(100_000, 100_000)).decode(),
                     mime_type="image/png"),
        *(image(3000 + n) for n in range(5)),
    ]
    return CallToolResult(content=blocks)


@server.tool()
def pair() -> CallToolResult:
    """Two frames in one result."""
    n = next(_counter)
    return CallToolResult(content=[TextContent(text="pair"), image(1000 + n), image(2000 + n)])


if __name__ == "__main__":
    server.run()
