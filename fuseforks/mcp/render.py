"""An MCP result as the turn layer takes it: text for the model, images to send, drops to report.

`render_tool_output` turns an MCP `CallToolResult`'s content into a `ToolOutput`:
text blocks joined by newlines, images through the normalizer (at most four kept), and a sentence in
the village language for everything the text alone would hide — an image-only result, an empty
result, an `isError` result, audio or an embedded resource (noted, never dumped), each dropped
image. A resource link is its URI. A result without images renders exactly as a text-only engine
would, so tools that never return images change in nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp.types import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.images.normalize import normalize_result_images, normalize_result_images_async
from fuseforks.images.types import ResultImages
from fuseforks.ports.tools import ToolOutput, error_text


def _split(content: Sequence[ContentBlock], language: Language) -> tuple[list[str], list[str]]:
    """Text parts in block order (notes for what cannot be carried) and the image payloads."""
    t = texts(language)
    parts: list[str] = []
    images: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            images.append(block.data)
        elif isinstance(block, AudioContent):
            parts.append(t.non_text_note("audio"))
        elif isinstance(block, EmbeddedResource):
            parts.append(t.non_text_note("resource"))
        elif isinstance(block, ResourceLink):
            parts.append(str(block.uri))
        else:  # a content type newer than this code: say so rather than drop it silently
            parts.append(t.non_text_note("resource"))
    return parts, images


def _assemble(parts: list[str], result: ResultImages, is_error: bool, language: Language) -> ToolOutput:
    t = texts(language)
    body = "\n".join(parts)
    if not body:
        if result.kept:
            body = t.image_only(len(result.kept))
        elif not result.dropped:
            body = t.empty_result()
    notes = [t.dropped_note(d.reason, d.index) for d in result.dropped]
    text = "\n".join([body, *notes] if body else notes)
    if is_error:
        text = error_text(text, language)
    return ToolOutput(text=text, images=result.kept, dropped=result.dropped, is_error=is_error)


def render_tool_output(
    content: Sequence[ContentBlock], is_error: bool, language: Language
) -> ToolOutput:
    """The tool output of an MCP result, normalizing images on the calling thread."""
    parts, images = _split(content, language)
    return _assemble(parts, normalize_result_images(images), is_error, language)


async def render_tool_output_async(
    content: Sequence[ContentBlock], is_error: bool, language: Language
) -> ToolOutput:
    """`render_tool_output` with image work in worker threads (large images do not block the loop)."""
    parts, images = _split(content, language)
    result = await normalize_result_images_async(images) if images else ResultImages([], [])
    return _assemble(parts, result, is_error, language)
