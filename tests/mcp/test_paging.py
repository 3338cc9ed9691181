"""A client's tool result with its tall pages in parts: the parts take the page's place after a
note, and never more images than the result may carry."""

from __future__ import annotations

import base64

import msgspec
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
)

from fuseforks.core.media import ENGINE_LIMITS
from fuseforks.mcp.paging import paged
from tests.helpers import imagegen as gen

LIMITS = msgspec.structs.replace(ENGINE_LIMITS, split_pages=True)
PAGE = base64.b64encode(gen.encode(gen.screenshot(1280, 3000, seed=5)[0], "PNG")).decode()
SMALL = base64.b64encode(gen.jpeg(64, 48)).decode()


def page() -> ImageContent:
    return ImageContent(type="image", data=PAGE, mime_type="image/png")


def blob(n: int) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=BlobResourceContents(
        uri=f"pictures://{n}.jpg", mime_type="image/jpeg", blob=SMALL))


def test_a_page_takes_its_parts_place_after_a_note() -> None:
    source = CallToolResult(content=[TextContent(type="text", text="before"), page(),
                                     TextContent(type="text", text="after")])
    cut = paged(source, LIMITS, "en")
    assert [(type(b).__name__, getattr(b, "text", None)) for b in cut.content] == [
        ("TextContent", "before"),
        ("TextContent", "(the next 2 images are one 1280×3000 page, cut from top to bottom)"),
        ("ImageContent", None), ("ImageContent", None), ("TextContent", "after")]
    assert paged(source, msgspec.structs.replace(LIMITS, max_edge_px=4000), "en") is source


def test_image_blobs_count_against_the_room_a_page_has() -> None:
    """Four images are all a result may carry: a page beside three image blobs stays whole,
    rather than push the last image out."""
    source = CallToolResult(content=[blob(1), blob(2), blob(3), page()])
    assert paged(source, LIMITS, "en") is source
    room_for_two = CallToolResult(content=[blob(1), blob(2), page()])
    assert len(paged(room_for_two, LIMITS, "en").content) == 3 + 2
