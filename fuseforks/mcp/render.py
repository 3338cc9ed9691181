"""An MCP result as the turn layer takes it: text for the model, images to send, drops to report.

`render_tool_output` turns an MCP `CallToolResult`'s content into a `ToolOutput`:
text blocks joined by newlines, images through the normalizer (at most four kept), and a sentence in
the village language for everything the text alone would hide — an image-only result, an empty
result, an `isError` result, audio or a binary embedded resource (noted, never dumped), each dropped
image. A result without images renders exactly as a text-only engine would, so tools that never
return images change in nothing.

Resources:
- a resource link is a label with its URI, then its name, type and description
  (`[resource link file:///photos/cat.jpg] cat.jpg (image/jpeg): the cat`); when the hub read
  the resource (`fuseforks.mcp.links`), what it read follows as embedded resources;
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

Audience: a block annotated for the user only is shown to a person (`ToolOutput.shown`) and
recorded, never sent to the model (an image of it is shown as a note); a block annotated for the
assistant only is sent to the model and not shown.

Order: text parts (text blocks, labels, notes) keep their block order in `text`. Images travel
apart from the text, so `ToolOutput.image_offsets` records, for each kept image, where in `text`
the text parts before it end (a character offset): the wires whose format can interleave put each
image back there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

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

from fuseforks.core.media import ENGINE_LIMITS, ImageLimits
from fuseforks.core.names import Language
from fuseforks.core.texts import Texts, texts
from fuseforks.images.fit import fit_result_images_async
from fuseforks.images.formats import PAGED_FORMATS
from fuseforks.images.normalize import normalize_result_images, normalize_result_images_async
from fuseforks.images.types import ResultImages
from fuseforks.mcp.blobs import blob_kind, blob_text, declared_type
from fuseforks.ports.tools import LinkRead, ToolOutput, error_text


def resource_text(uri: str, text: str) -> str:
    """How an embedded text resource reads: a label with its URI, then its text."""
    label = f"[resource {uri}]"
    return f"{label}\n{text}" if text else label


def link_text(link: ResourceLink) -> str:
    """How a resource link reads: a label with its URI, then its name (or title), type and
    description. The label says it is a link: when the engine read the resource, its content
    follows as an embedded resource does; when not, the model knows it was not read."""
    what = link.title or link.name
    if link.mime_type:
        what = f"{what} ({link.mime_type})"
    if link.description:
        what = f"{what}: {link.description}"
    return f"[resource link {link.uri}] {what}"


Audience = Literal["both", "user", "assistant"]


def audience_of(block: ContentBlock) -> Audience:
    """Who a block is for, from its annotations: `user` only, `assistant` only, or both (no
    audience, or both named)."""
    annotations = getattr(block, "annotations", None)
    named = set(annotations.audience or ()) if annotations is not None else set()
    if named == {"user"}:
        return "user"
    if named == {"assistant"}:
        return "assistant"
    return "both"


class _Split:
    """Text parts in block order (what the model reads and what a person is shown), the image
    payloads, and the text parts before each image."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.shown: list[str] = []
        self.images: list[str] = []
        self.positions: list[int] = []
        self.audience: Audience = "both"

    def text(self, part: str) -> None:
        if self.audience != "user":
            self.parts.append(part)
        if self.audience != "assistant":
            self.shown.append(part)

    def image(self, data: str, t: Texts) -> None:
        if self.audience == "user":
            self.shown.append(t.for_user_image())
            return
        self.images.append(data)
        self.positions.append(len(self.parts))


def _split(content: Sequence[ContentBlock], language: Language) -> _Split:
    t = texts(language)
    split = _Split()
    for block in content:
        split.audience = audience_of(block)
        if isinstance(block, TextContent):
            split.text(block.text)
        elif isinstance(block, ImageContent):
            split.image(block.data, t)
        elif isinstance(block, AudioContent):
            split.text(t.non_text_note("audio"))
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                split.text(resource_text(str(resource.uri), resource.text))
            else:
                _split_blob(split, resource, t)
        elif isinstance(block, ResourceLink):
            split.text(link_text(block))
        else:  # a content type newer than this code: say so rather than drop it silently
            split.text(t.non_text_note("resource"))
    return split


def _split_blob(split: _Split, resource: BlobResourceContents, t: Texts) -> None:
    uri = str(resource.uri)
    mime_type = declared_type(uri, resource.mime_type)
    kind = blob_kind(resource.blob, mime_type)
    if kind == "image":
        split.text(resource_text(uri, ""))
        split.image(resource.blob, t)
        return
    text = blob_text(resource.blob, mime_type) if kind == "text" else None
    split.text(t.non_text_note("resource") if text is None else resource_text(uri, text))


def _text(parts: list[str], result: ResultImages, kept_at: list[int], is_error: bool,
          language: Language, limits: ImageLimits) -> str:
    t = texts(language)
    body = "\n".join(parts)
    if not body:
        if result.kept:
            body = t.image_only(len(result.kept))
        elif not result.dropped:
            body = t.empty_result()
    notes = [t.dropped_note(d.reason, d.index, limits.max_images) for d in result.dropped]
    notes += [t.first_frame_note(at, image.frames, paged=image.source_format in PAGED_FORMATS)
              for at, image in zip(kept_at, result.kept, strict=True) if image.frames > 1]
    text = "\n".join([body, *notes] if body else notes)
    return error_text(text, language) if is_error else text


def _assemble(split: _Split, result: ResultImages, is_error: bool, language: Language,
              limits: ImageLimits, reads: Sequence[LinkRead] = ()) -> ToolOutput:
    dropped = {d.index for d in result.dropped}
    kept_at = [i for i in range(len(split.images)) if i not in dropped]
    text = _text(split.parts, result, kept_at, is_error, language, limits)
    shown = (None if split.shown == split.parts
             else _text(split.shown, result, kept_at, is_error, language, limits))
    positions = [p for index, p in enumerate(split.positions) if index not in dropped]
    lead = len(error_text("", language)) if is_error else 0
    offsets = [lead + len("\n".join(split.parts[:p])) if split.parts else 0 for p in positions]
    return ToolOutput(text=text, images=result.kept, dropped=result.dropped, is_error=is_error,
                      image_offsets=offsets, shown=shown, reads=list(reads))


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
    reads: Sequence[LinkRead] = (),
) -> ToolOutput:
    """`render_tool_output` with image work in worker threads (large images do not block the
    loop). `image_budget`: base64 characters the kept images may take together (a client's limit
    on a whole result, less the rest of it): larger ones are re-encoded to fit. `reads`: the
    linked resources read for this result (their content is in `content`)."""
    split = _split(content, language)
    images = split.images
    result = (await normalize_result_images_async(images, limits) if images
              else ResultImages([], []))
    if image_budget is not None and result.kept:
        result = await fit_result_images_async(images, result, limits, max(image_budget, 0))
    return _assemble(split, result, is_error, language, limits, reads)
