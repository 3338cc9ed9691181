"""A client's tool result with each tall page cut into parts (`fuseforks.images.pages`).

The parts take the page's place in the result, in order, each an image block with the page's
annotations, after one text block that tells the model they are one page (in the village
language). The plan is made of this result, so the record holds the parts the client got and the
note it read. A result that would carry more images than the limits allow is cut into fewer
parts: every image of it keeps its place.
"""

from __future__ import annotations

import base64
import binascii

from mcp.types import CallToolResult, ContentBlock, ImageContent, TextContent

from fuseforks.core.media import ImageLimits
from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.images.pages import page_parts
from fuseforks.mcp.plan import draft


def paged(source: CallToolResult, limits: ImageLimits, language: Language) -> CallToolResult:
    """`source` with its tall pages in parts (itself when none is cut). Decodes whole images:
    run it in a worker thread."""
    images = len(draft(source.content, "client", language).payloads)  # blobs too
    room = limits.max_images - images + 1  # the parts one page may take beside the others
    content: list[ContentBlock] = []
    for block in source.content:
        content.extend(_cut(block, limits, room, language))
    if len(content) == len(source.content):
        return source
    return source.model_copy(update={"content": content})


def _cut(block: ContentBlock, limits: ImageLimits, room: int,
         language: Language) -> list[ContentBlock]:
    if not isinstance(block, ImageContent):
        return [block]
    try:
        data = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return [block]  # the image rules say what is wrong with it
    size, parts = page_parts(data, limits, room)
    if not parts:
        return [block]
    note = TextContent(type="text", text=texts(language).page_parts_note(len(parts), size))
    return [note, *(block.model_copy(update={"data": base64.b64encode(part).decode(),
                                             "mime_type": "image/png"}) for part in parts)]
