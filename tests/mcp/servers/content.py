"""A real MCP server returning every kind of tool content the tool layer must render.

Run over stdio (default), streamable HTTP (`python content.py --http --port N`) or the older
HTTP+SSE transport (`python content.py --sse --port N`, endpoint `/sse`).
"""

from __future__ import annotations

import base64
import sys

import pictures
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_types import METHOD_NOT_FOUND, RequestParams

server = MCPServer("content", log_level="WARNING")


def _image(data: bytes, mime_type: str) -> ImageContent:
    return ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)


def _result(*blocks: ContentBlock, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=list(blocks), is_error=is_error)


@server.tool()
def text_only() -> CallToolResult:
    """Two text blocks, no images."""
    return _result(TextContent(text="line one"), TextContent(text="line two"))


@server.tool()
def jpeg() -> CallToolResult:
    """One small red JPEG after a text block."""
    return _result(
        TextContent(text="a red frame"), _image(pictures.solid_jpeg((255, 0, 0)), "image/jpeg")
    )


@server.tool()
def image_only() -> CallToolResult:
    """One JPEG and nothing else."""
    return _result(_image(pictures.solid_jpeg((0, 128, 0)), "image/jpeg"))


@server.tool()
def png_alpha() -> CallToolResult:
    """A PNG with a transparent half."""
    return _result(_image(pictures.png_with_alpha(), "image/png"))


@server.tool()
def gif() -> CallToolResult:
    """An animated GIF of three frames."""
    return _result(TextContent(text="an animation"), _image(pictures.gif(), "image/gif"))


@server.tool()
def tiff_and_bmp() -> CallToolResult:
    """A TIFF of two pages and a BMP, as FastMCP's `Image(format=...)` sends them."""
    return _result(_image(pictures.tiff(), "image/tiff"), _image(pictures.bmp(), "image/bmp"))


@server.tool()
def svg() -> CallToolResult:
    """An SVG image block: markup, not carried as a picture."""
    return _result(_image(pictures.SVG, "image/svg+xml"))


@server.tool()
def broken_base64() -> CallToolResult:
    """An image block whose data is not base64."""
    return _result(
        TextContent(text="broken"), ImageContent(data="not*base64!", mime_type="image/jpeg")
    )


@server.tool()
def five_images() -> CallToolResult:
    """Five JPEGs of distinct colours and one text block."""
    images = [_image(pictures.solid_jpeg(colour), "image/jpeg") for colour in pictures.FIVE_COLOURS]
    return _result(TextContent(text="five frames"), *images)


@server.tool()
def empty() -> CallToolResult:
    """No content at all."""
    return _result()


@server.tool()
def structured_only() -> CallToolResult:
    """A structured result without the text block the spec recommends beside it."""
    return CallToolResult(content=[], structured_content={"seq": 7, "focus": "locked"})


@server.tool()
def is_error() -> CallToolResult:
    """A tool-level error."""
    return _result(TextContent(text="camera busy"), is_error=True)


@server.tool()
def audio() -> CallToolResult:
    """Text plus an audio clip."""
    clip = base64.b64encode(b"RIFF\x00\x00\x00\x00WAVE").decode("ascii")
    return _result(TextContent(text="recorded"), AudioContent(data=clip, mime_type="audio/wav"))


@server.tool()
def embedded_blob() -> CallToolResult:
    """An embedded binary resource."""
    blob = BlobResourceContents(
        uri="file:///tmp/raw.bin",
        mime_type="application/octet-stream",
        blob=base64.b64encode(b"\x00\x01\x02secret-bytes").decode("ascii"),
    )
    return _result(TextContent(text="raw data"), EmbeddedResource(resource=blob))


def _blob(uri: str, data: bytes, mime_type: str | None) -> EmbeddedResource:
    blob = base64.b64encode(data).decode("ascii")
    return EmbeddedResource(resource=BlobResourceContents(uri=uri, mime_type=mime_type, blob=blob))


@server.tool()
def embedded_blobs() -> CallToolResult:
    """Blob resources: a PNG, a JPEG without a type, plain text, Latin-1 text, JSON, a PDF."""
    return _result(
        TextContent(text="files"),
        _blob("file:///shots/red.png", pictures.png_with_alpha(), "image/png"),
        _blob("file:///cam/blue.jpg", pictures.solid_jpeg((0, 0, 255)), None),
        _blob("file:///notes.txt", b"plain notes\nsecond line", "text/plain"),
        _blob("file:///old.txt", "café".encode("latin-1"), "text/plain; charset=ISO-8859-1"),
        _blob("file:///data.json", b'{"focus": "locked"}', "application/json"),
        _blob("file:///doc.pdf", b"%PDF-1.7\n%binary", "application/pdf"),
    )


@server.tool()
def embedded_text() -> CallToolResult:
    """An embedded text resource."""
    doc = TextResourceContents(
        uri="file:///tmp/notes.txt", mime_type="text/plain", text="inner notes"
    )
    return _result(EmbeddedResource(resource=doc))


@server.tool()
def embedded_text_between() -> CallToolResult:
    """Text, an embedded text resource, an empty one, and text again."""
    doc = TextResourceContents(
        uri="https://example.org/readme.md", mime_type="text/markdown", text="# Title\nbody"
    )
    empty = TextResourceContents(uri="file:///tmp/empty.txt", text="")
    return _result(
        TextContent(text="see"),
        EmbeddedResource(resource=doc),
        EmbeddedResource(resource=empty),
        TextContent(text="end"),
    )


@server.tool()
def interleaved() -> CallToolResult:
    """Text, image, text, image: a caption before each frame."""
    return _result(
        TextContent(text="frame A follows"),
        _image(pictures.solid_jpeg((255, 0, 0)), "image/jpeg"),
        TextContent(text="frame B follows"),
        _image(pictures.solid_jpeg((0, 255, 0)), "image/jpeg"),
    )


@server.tool()
def interleaved_with_drops() -> CallToolResult:
    """Image, text, an SVG (dropped), text, image, image: positions of the kept images only."""
    return _result(
        _image(pictures.solid_jpeg((255, 0, 0)), "image/jpeg"),
        TextContent(text="one"),
        _image(pictures.SVG, "image/svg+xml"),
        TextContent(text="two"),
        _image(pictures.solid_jpeg((0, 255, 0)), "image/jpeg"),
        _image(pictures.solid_jpeg((0, 0, 255)), "image/jpeg"),
    )


@server.tool()
def jpeg_as_text() -> CallToolResult:
    """A JPEG sent the wrong way: its base64 inside a text block, between two sentences."""
    data = base64.b64encode(pictures.solid_jpeg((255, 0, 0))).decode("ascii")
    return _result(TextContent(text=f"frame: {data} (red)"))


@server.tool()
def long_words() -> CallToolResult:
    """Long runs that are text, not media: a checksum, a token and the base64 of a sentence."""
    return _result(TextContent(text=pictures.LONG_WORDS))


@server.tool()
def resource_link() -> CallToolResult:
    """A link to a resource instead of its content."""
    link = ResourceLink(uri="file:///photos/cat.jpg", name="cat.jpg", mime_type="image/jpeg")
    return _result(TextContent(text="see"), link)


@server.tool()
def lying_mime() -> CallToolResult:
    """JPEG bytes that claim to be a PNG."""
    return _result(_image(pictures.solid_jpeg((0, 0, 255)), "image/png"))


@server.tool()
def jpeg_1_5_mb() -> CallToolResult:
    """A ~1.5 MB JPEG (over the SDK's default 1 MiB SSE event once base64-encoded)."""
    return _result(_image(pictures.jpeg_1_5_mb(), "image/jpeg"))


@server.tool()
def jpeg_near_2_mib() -> CallToolResult:
    """A JPEG just under 2 MiB."""
    return _result(_image(pictures.jpeg_near_2_mib(), "image/jpeg"))


@server.tool()
def png_10_mb() -> CallToolResult:
    """A ~10 MB PNG."""
    return _result(_image(pictures.png_10_mb(), "image/png"))


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one HTTP request header the client sent ("(none)" when absent or on stdio)."""
    headers = ctx.headers or {}
    lowered = {key.lower(): value for key, value in headers.items()}
    return lowered.get(name.lower(), "(none)")


def speak_2025_only() -> None:
    """Answer `server/discover` as a 2025-era server does (method not found), so clients fall back
    to the initialize handshake and tool results travel as SSE events, as with most deployed
    servers."""

    async def not_found(ctx: object, params: RequestParams) -> None:
        raise MCPError(code=METHOD_NOT_FOUND, message="Method not found")

    server._lowlevel_server.add_request_handler("server/discover", RequestParams, not_found)


if __name__ == "__main__":
    if "--legacy" in sys.argv:
        speak_2025_only()
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    elif "--sse" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run("sse", host="127.0.0.1", port=port)
    else:
        server.run()
