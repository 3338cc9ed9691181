"""An MCP server that answers with every kind of content, for the plan of an MCP result.

Tools:
- `annotated`: text, an image for the user only (a 640x400 JPEG), an image for the assistant
  only (a 200x100 PNG);
- `photo_blob`: text and a 4000x3000 PNG in an embedded blob resource;
- `every_kind`: text, an image, audio, an embedded text resource, a JSON blob, a PDF blob, a
  resource link, an image whose base64 is broken, and an image blob;
- `measured`: a line of text and a 640x400 JPEG, with structured content (`Size`, its output
  schema), as a server made with a typed SDK answers;
- `counted`: text and structured content (`Size`), no image;
- `big_photo`: a 3136x1960 JPEG photo, twice the engine's long edge.
Resources: `pictures://photo.png` (the 4000x3000 PNG as a blob), `pictures://notes.txt` (text).
Prompt: `look`, a user's text and the 4000x3000 PNG.

Run from the repository: `python -m tests.gateway.servers.blocks` (stdio).
"""

from __future__ import annotations

import base64
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.types import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

from tests.gateway.pictures import (
    big_photo_jpeg,
    page_png,
    photo_png,
    small_jpeg,
    tiny_png,
    ui_png,
    ui_webp,
)

server = MCPServer("blocks", log_level="WARNING")
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _blob(uri: str, data: bytes, mime_type: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=BlobResourceContents(
        uri=uri, mime_type=mime_type, blob=b64(data)))


@server.tool()
def annotated() -> CallToolResult:
    """Text, an image for the user only, an image for the assistant only."""
    return CallToolResult(content=[
        TextContent(type="text", text="two views"),
        ImageContent(type="image", data=b64(small_jpeg()), mime_type="image/jpeg",
                     annotations=Annotations(audience=["user"])),
        ImageContent(type="image", data=b64(tiny_png()), mime_type="image/png",
                     annotations=Annotations(audience=["assistant"])),
    ])


@server.tool()
def photo_blob() -> CallToolResult:
    """Text and a 4000x3000 PNG in an embedded blob resource."""
    return CallToolResult(content=[TextContent(type="text", text="a photo"),
                                   _blob("pictures://photo.png", photo_png(), "image/png")])


@server.tool()
def every_kind() -> CallToolResult:
    """One block of every kind."""
    return CallToolResult(content=[
        TextContent(type="text", text="every kind"),
        ImageContent(type="image", data=b64(tiny_png()), mime_type="image/png"),
        AudioContent(type="audio", data=b64(b"RIFF\x24\x00\x00\x00WAVEfmt "), mime_type="audio/wav"),
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="pictures://notes.txt", mime_type="text/plain", text="some notes")),
        _blob("pictures://data.json", b'{"seen": 2}', "application/json"),
        _blob("pictures://doc.pdf", PDF, "application/pdf"),
        ResourceLink(type="resource_link", uri="pictures://photo.png", name="photo.png",
                     mime_type="image/png", description="the photo"),
        ImageContent(type="image", data="not base64 at all!", mime_type="image/png"),
        _blob("pictures://small.jpg", small_jpeg(), "image/jpeg"),
    ])


class Size(BaseModel):
    width: int
    height: int


@server.tool()
def measured() -> Annotated[CallToolResult, Size]:
    """A photo and its size, structured."""
    return CallToolResult(content=[
        TextContent(type="text", text="a photo"),
        ImageContent(type="image", data=b64(small_jpeg()), mime_type="image/jpeg"),
    ], structured_content={"width": 640, "height": 400})


@server.tool()
def counted() -> Annotated[CallToolResult, Size]:
    """A size, structured, and no image."""
    return CallToolResult(content=[TextContent(type="text", text='{"width": 3, "height": 2}')],
                          structured_content={"width": 3, "height": 2})


@server.tool()
def big_photo() -> CallToolResult:
    """A 3136x1960 JPEG photo."""
    return CallToolResult(content=[ImageContent(type="image", data=b64(big_photo_jpeg()),
                                                mime_type="image/jpeg")])


@server.tool()
def full_page() -> CallToolResult:
    """A caption, a full-page screenshot, a small photo."""
    return CallToolResult(content=[
        TextContent(type="text", text="the page"),
        ImageContent(type="image", data=b64(page_png()), mime_type="image/png"),
        ImageContent(type="image", data=b64(small_jpeg()), mime_type="image/jpeg"),
    ])


@server.tool()
def ui_screens() -> CallToolResult:
    """A 2x UI screenshot as PNG, and a 1x one as WebP."""
    return CallToolResult(content=[
        ImageContent(type="image", data=b64(ui_png()), mime_type="image/png"),
        ImageContent(type="image", data=b64(ui_webp()), mime_type="image/webp"),
    ])


@server.resource("pictures://photo.png", mime_type="image/png")
def photo() -> bytes:
    """The 4000x3000 PNG."""
    return photo_png()


@server.resource("pictures://notes.txt", mime_type="text/plain")
def notes() -> str:
    """Some notes."""
    return "some notes"


@server.prompt()
def look() -> list[UserMessage]:
    """A user's text and the 4000x3000 PNG."""
    return [UserMessage(content=TextContent(type="text", text="What does this photo show?")),
            UserMessage(content=ImageContent(type="image", data=b64(photo_png()),
                                             mime_type="image/png"))]


if __name__ == "__main__":
    server.run()
