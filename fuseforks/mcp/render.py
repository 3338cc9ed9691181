"""An MCP result as the turn layer takes it: text for the model, images to send, drops to report.

`render_tool_output` turns an MCP `CallToolResult`'s content into a `ToolOutput`:
text blocks joined by newlines, images through the normalizer (at most four kept), and a sentence in
the village language for everything the text alone would hide — an image-only result, an empty
result, an `isError` result, audio or a binary embedded resource (noted, never dumped), each dropped
image. A result without images renders exactly as a text-only engine would, so tools that never
return images change in nothing.

Resources:
- a resource link is its URI, on its own line;
- an embedded *text* resource (`TextResourceContents`) is its URI in a label line, then its text:
  `[resource file:///notes.txt]` + newline + `inner notes` (the label alone when the text is
  empty). The label is MCP's own word and a URI, the same in every village language, like a
  resource link; it tells the model where the text came from and where it starts. Its text goes
  through the same privacy guard as any text block;
- an embedded *blob* resource (`BlobResourceContents`) is a note in the village language: its
  bytes are never dumped into the text.

Order: text parts (text blocks, labels, notes) keep their block order in `text`. Images travel
apart from the text, so `ToolOutput.image_offsets` records, for each kept image, where in `text`
the text parts before it end (a character offset): the wires whose format can interleave put each
image back there.
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
    TextResourceContents,
)

from fuseforks.core.media import ENGINE_LIMITS, ImageLimits
from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.images.fit import fit_result_images_async
from fuseforks.images.normalize import normalize_result_images, normalize_result_images_async
from fuseforks.images.types import ResultImages
from fuseforks.ports.tools import ToolOutput, error_text


def resource_text(uri: str, text: str) -> str:
    """How an embedded text resource reads: a label with its URI, then its text."""
    label = f"[resource {uri}]"
    return f"{label}\n{text}" if text else label


class _Split:
    """Text parts in block order, the image payloads, and the text parts before each image."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.images: list[str] = []
        self.positions: list[int] = []


def _split(content: Sequence[ContentBlock], language: Language) -> _Split:
    t = texts(language)
    split = _Split()
    for block in content:
        if isinstance(block, TextContent):
            split.parts.append(block.text)
        elif isinstance(block, ImageContent):
            split.images.append(block.data)
            split.positions.append(len(split.parts))
        elif isinstance(block, AudioContent):
            split.parts.append(t.non_text_note("audio"))
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                split.parts.append(resource_text(str(resource.uri), resource.text))
            else:
                split.parts.append(t.non_text_note("resource"))
        elif isinstance(block, ResourceLink):
            split.parts.append(str(block.uri))
        else:  # a content type newer than this code: say so rather than drop it silently
            split.parts.append(t.non_text_note("resource"))
    return split


def _assemble(split: _Split, result: ResultImages, is_error: bool, language: Language,
              limits: ImageLimits) -> ToolOutput:
    t = texts(language)
    body = "\n".join(split.parts)
    if not body:
        if result.kept:
            body = t.image_only(len(result.kept))
        elif not result.dropped:
            body = t.empty_result()
    notes = [t.dropped_note(d.reason, d.index, limits.max_images) for d in result.dropped]
    text = "\n".join([body, *notes] if body else notes)
    if is_error:
        text = error_text(text, language)
    dropped = {d.index for d in result.dropped}
    positions = [p for index, p in enumerate(split.positions) if index not in dropped]
    lead = len(error_text("", language)) if is_error else 0
    offsets = [lead + len("\n".join(split.parts[:p])) if split.parts else 0 for p in positions]
    return ToolOutput(text=text, images=result.kept, dropped=result.dropped, is_error=is_error,
                      image_offsets=offsets)


def render_tool_output(
    content: Sequence[ContentBlock], is_error: bool, language: Language,
    limits: ImageLimits = ENGINE_LIMITS,
) -> ToolOutput:
    """The tool output of an MCP result, normalizing images on the calling thread."""
    split = _split(content, language)
    return _assemble(split, normalize_result_images(split.images, limits), is_error, language,
                     limits)


async def render_tool_output_async(
    content: Sequence[ContentBlock], is_error: bool, language: Language,
    limits: ImageLimits = ENGINE_LIMITS, image_budget: int | None = None,
) -> ToolOutput:
    """`render_tool_output` with image work in worker threads (large images do not block the
    loop). `image_budget`: base64 characters the kept images may take together (a client's limit
    on a whole result, less the rest of it): larger ones are re-encoded to fit."""
    split = _split(content, language)
    images = split.images
    result = (await normalize_result_images_async(images, limits) if images
              else ResultImages([], []))
    if image_budget is not None and result.kept:
        result = await fit_result_images_async(images, result, limits, max(image_budget, 0))
    return _assemble(split, result, is_error, language, limits)
