"""A real MCP server whose tools link to resources it serves, and annotate content for one
audience (over stdio).

- `link_to_text`, `link_to_image`: a `resource_link` to a text file and to a PNG it serves;
- `link_missing`: a link to an image resource that does not exist;
- `link_to_archive`: a link to a zip, which the engine does not follow;
- `annotated`: text for both, text for the user only, text for the assistant only, an image for
  the user only.
"""

from __future__ import annotations

import base64
import io

from mcp.server.mcpserver import MCPServer
from mcp.types import Annotations, CallToolResult, ImageContent, ResourceLink, TextContent
from PIL import Image

server = MCPServer("linking", log_level="WARNING")
NOTES = "buy milk\ncall the vet\n"


def screen_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 40), (30, 120, 200)).save(out, "PNG")
    return out.getvalue()


@server.resource("file:///notes/today.txt", mime_type="text/plain")
def today() -> str:
    return NOTES


@server.resource("file:///shots/screen.png", mime_type="image/png")
def screen() -> bytes:
    return screen_png()


@server.tool()
def link_to_text() -> CallToolResult:
    """A link to today's notes."""
    return CallToolResult(content=[
        TextContent(text="notes are here"),
        ResourceLink(uri="file:///notes/today.txt", name="today.txt", mime_type="text/plain",
                     description="today's notes"),
    ])


@server.tool()
def link_to_image() -> CallToolResult:
    """A link to a screenshot."""
    return CallToolResult(content=[ResourceLink(uri="file:///shots/screen.png", name="screen.png",
                                                title="Screen", mime_type="image/png")])


@server.tool()
def link_missing() -> CallToolResult:
    """A link to a resource that is not there."""
    return CallToolResult(content=[ResourceLink(uri="file:///shots/gone.png", name="gone.png",
                                                mime_type="image/png")])


@server.tool()
def link_to_archive() -> CallToolResult:
    """A link to a zip file."""
    return CallToolResult(content=[ResourceLink(uri="file:///backup.zip", name="backup.zip",
                                                mime_type="application/zip",
                                                description="last night's backup")])


@server.tool()
def annotated() -> CallToolResult:
    """Content for both audiences, for the user only and for the assistant only."""
    user, assistant = Annotations(audience=["user"]), Annotations(audience=["assistant"])
    picture = base64.b64encode(screen_png()).decode()
    return CallToolResult(content=[
        TextContent(text="42 rows"),
        TextContent(text="Showing 42 rows in the table below.", annotations=user),
        TextContent(text="row ids: 1-42", annotations=assistant),
        ImageContent(data=picture, mime_type="image/png", annotations=user),
    ])


if __name__ == "__main__":
    server.run()
