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
- an embedded *blob* resource (`BlobResourceContents`) is read by what it holds
  (`fuseforks.mcp.blobs`): an image goes through the image pipeline like an image block (same
  cap, notes and record), after its URI's label; text (`text/*`, JSON, XML, ...) is decoded and
  reads like an embedded text resource; anything else is a note in the village language — its
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
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from fuseforks.core.names import Language
from fuseforks.core.texts import Texts, texts
from fuseforks.images.formats import PAGED_FORMATS
from fuseforks.images.normalize import normalize_result_images, normalize_result_images_async
from fuseforks.images.types import ResultImages
from fuseforks.mcp.blobs import blob_kind, blob_text
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
                _split_blob(split, resource, t)
        elif isinstance(block, ResourceLink):
            split.parts.append(str(block.uri))
        else:  # a content type newer than this code: say so rather than drop it silently
            split.parts.append(t.non_text_note("resource"))
    return split


def _split_blob(split: _Split, resource: BlobResourceContents, t: Texts) -> None:
    uri = str(resource.uri)
    kind = blob_kind(resource.blob, resource.mime_type)
    if kind == "image":
        split.parts.append(resource_text(uri, ""))
        split.images.append(resource.blob)
        split.positions.append(len(split.parts))
        return
    text = blob_text(resource.blob, resource.mime_type) if kind == "text" else None
    split.parts.append(t.non_text_note("resource") if text is None else resource_text(uri, text))


def _assemble(split: _Split, result: ResultImages, is_error: bool, language: Language) -> ToolOutput:
    t = texts(language)
    body = "\n".join(split.parts)
    if not body:
        if result.kept:
            body = t.image_only(len(result.kept))
        elif not result.dropped:
            body = t.empty_result()
    dropped = {d.index for d in result.dropped}
    kept_at = [i for i in range(len(split.images)) if i not in dropped]
    notes = [t.dropped_note(d.reason, d.index) for d in result.dropped]
    notes += [t.first_frame_note(at, image.frames, paged=image.source_format in PAGED_FORMATS)
              for at, image in zip(kept_at, result.kept, strict=True) if image.frames > 1]
    text = "\n".join([body, *notes] if body else notes)
    if is_error:
        text = error_text(text, language)
    positions = [p for index, p in enumerate(split.positions) if index not in dropped]
    lead = len(error_text("", language)) if is_error else 0
    offsets = [lead + len("\n".join(split.parts[:p])) if split.parts else 0 for p in positions]
    return ToolOutput(text=text, images=result.kept, dropped=result.dropped, is_error=is_error,
                      image_offsets=offsets)


def render_tool_output(
    content: Sequence[ContentBlock], is_error: bool, language: Language
) -> ToolOutput:
    """The tool output of an MCP result, normalizing images on the calling thread."""
    split = _split(content, language)
    return _assemble(split, normalize_result_images(split.images), is_error, language)


async def render_tool_output_async(
    content: Sequence[ContentBlock], is_error: bool, language: Language
) -> ToolOutput:
    """`render_tool_output` with image work in worker threads (large images do not block the loop)."""
    split = _split(content, language)
    images = split.images
    result = await normalize_result_images_async(images) if images else ResultImages([], [])
    return _assemble(split, result, is_error, language)
