"""One plan of an MCP result: decided once, rendered by every reader.

What a result holds and what becomes of it is decided here, and only here: each block in its
order with its kind and its audience, each image's fate (sent as the server sent it, re-encoded,
shrunk to fit, dropped with its reason), the notes in the village language, and — for a client
with a limit on a whole result — what the rest of the result costs. The model's tool output (what
a turn records and the wires place), the gateway's reply to its client (`fuseforks.mcp.reply`) and
the record render from the plan and decide nothing of their own, so what a model or a client
receives is what the record says it received.

Two recipients:
- the **model** (a turn): a block annotated for the user only is shown to a person and recorded,
  never sent (an image of it is not even normalized: a note stands in the person's view); a block
  for the assistant only is sent and not shown;
- a **client** (the gateway): every block goes to the client with its annotations (the client
  honours the audience itself), so every image is normalized within the client's limits.

Kinds: text, image, audio, an embedded text resource, an embedded blob — an image, text in bytes,
or anything else (`fuseforks.mcp.blobs`) —, a resource link, and anything newer than this code.
How each reads as text: a text block is its text; a resource link is a label with its URI, then
its name, type and description (`[resource link file:///photos/cat.jpg] cat.jpg (image/jpeg): the
cat`; what the engine read of it follows as embedded resources, `fuseforks.mcp.links`); an
embedded text resource is its URI in a label line, then its text (`[resource file:///notes.txt]`
+ newline + the text: MCP's own word and a URI, the same in every village language); an image
blob is its label, the image goes through the image pipeline like an image block; a text blob
reads like a text resource; audio, other blobs and unknown kinds are a note (never their bytes).

The text a model reads keeps the text parts in block order; images travel apart, so each kept
image's offset in that text is kept (`ToolOutput.image_offsets`) for the wires that interleave.
A result without images reads exactly as a text-only engine would have it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from fuseforks.core.media import ImageLimits
from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.images.normalize import normalize_result_images_async
from fuseforks.images.types import DroppedImage, NormalizedImage, ResultImages
from fuseforks.mcp.blobs import blob_kind, blob_text, declared_type
from fuseforks.ports.tools import LinkRead, ToolOutput, error_text
from fuseforks.projections.notes import image_notes, kept_places

Recipient = Literal["model", "client"]
Audience = Literal["both", "user", "assistant"]
BlockKind = Literal["text", "image", "audio", "resource_text", "blob_image", "blob_text",
                    "blob_other", "resource_link", "unknown"]
ClientSource = CallToolResult | ReadResourceResult | GetPromptResult
"""What a server answered a client's request with, the shape the gateway's reply keeps."""

IMAGE_KINDS: frozenset[BlockKind] = frozenset({"image", "blob_image"})


class PlannedBlock(msgspec.Struct, frozen=True, kw_only=True):
    """One block of the server's result and what is done with it."""

    kind: BlockKind
    audience: Audience
    text: str = ""
    """How it reads as text (a label, a note, its text); "" for an image block."""
    slot: int | None = None
    """Images: its place among the result's images (`ResultPlan.slots`); None for an image the
    recipient does not get (for the user only, in a turn)."""


class ImageSlot(msgspec.Struct, frozen=True, kw_only=True):
    """One image of the result: the image sent, or why none is."""

    block: int
    image: NormalizedImage | None = None
    drop: DroppedImage | None = None


class ResultPlan(msgspec.Struct, frozen=True, kw_only=True):
    """An MCP result, decided: read `blocks` and `slots`, never the content again."""

    recipient: Recipient
    language: Language
    limits: ImageLimits
    content: list[Any]
    """The server's blocks (`ContentBlock`), in order; for a model, with what linked resources
    held after each link."""
    blocks: list[PlannedBlock]
    slots: list[ImageSlot]
    is_error: bool = False
    reads: list[LinkRead] = []
    source: Any = None
    """A client's plan: the server's own result (`ClientSource`), whose shape the reply keeps."""
    bytes_without_images: int = 0
    """A client's plan: its reply's size with every sent image's data left out."""

    @property
    def kept(self) -> list[NormalizedImage]:
        return [slot.image for slot in self.slots if slot.image is not None]

    @property
    def dropped(self) -> list[DroppedImage]:
        return [slot.drop for slot in self.slots if slot.drop is not None]

    @property
    def notes(self) -> list[str]:
        """The notes on the result's images, as the record will derive them again."""
        return image_notes(self.language, self.limits.max_images, self.kept, self.dropped)

    def _sent(self, block: PlannedBlock) -> bool:
        return self.recipient == "client" or block.audience != "user"

    def _shown(self, block: PlannedBlock) -> bool:
        return block.audience != "assistant"

    def _text(self, parts: list[str]) -> str:
        t = texts(self.language)
        body = "\n".join(parts)
        if not body:
            if self.kept:
                body = t.image_only(len(self.kept))
            elif not self.dropped:
                body = t.empty_result()
        text = "\n".join([body, *self.notes] if body else self.notes)
        return error_text(text, self.language) if self.is_error else text

    def tool_output(self) -> ToolOutput:
        """The output as the recipient reads it: the text (its text parts, then the notes), the
        images sent, the drops, where each image sat in the text, and what a person is shown when
        that differs (a model's result with blocks for one audience)."""
        t = texts(self.language)
        parts: list[str] = []
        shown: list[str] = []
        positions: list[int] = []
        for planned in self.blocks:
            if planned.kind != "image":  # an image blob has text too: its label, before it
                if self._sent(planned):
                    parts.append(planned.text)
                if self._shown(planned):
                    shown.append(planned.text)
            if planned.kind in IMAGE_KINDS:
                if planned.slot is None:  # for the user only: a person sees that there was one
                    shown.append(t.for_user_image())
                elif self.slots[planned.slot].image is not None:
                    positions.append(len(parts))
        text = self._text(parts)
        lead = len(error_text("", self.language)) if self.is_error else 0
        offsets = [lead + len("\n".join(parts[:p])) if parts else 0 for p in positions]
        return ToolOutput(
            text=text, images=self.kept, dropped=self.dropped, is_error=self.is_error,
            image_offsets=offsets,
            shown=None if self.recipient == "client" or shown == parts else self._text(shown),
            reads=list(self.reads), bytes_without_images=self.bytes_without_images)


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


def resource_text(uri: str, text: str) -> str:
    """How an embedded text resource reads: a label with its URI, then its text."""
    label = f"[resource {uri}]"
    return f"{label}\n{text}" if text else label


def link_text(link: ResourceLink) -> str:
    """How a resource link reads: a label with its URI, then its name (or title), type and
    description."""
    what = link.title or link.name
    if link.mime_type:
        what = f"{what} ({link.mime_type})"
    if link.description:
        what = f"{what}: {link.description}"
    return f"[resource link {link.uri}] {what}"


def _classified(block: ContentBlock, language: Language) -> tuple[BlockKind, str, str | None]:
    """A block's kind, its text, and its image payload (base64) when it is an image."""
    t = texts(language)
    if isinstance(block, TextContent):
        return "text", block.text, None
    if isinstance(block, ImageContent):
        return "image", "", block.data
    if isinstance(block, AudioContent):
        return "audio", t.non_text_note("audio"), None
    if isinstance(block, ResourceLink):
        return "resource_link", link_text(block), None
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        uri = str(resource.uri)
        if isinstance(resource, TextResourceContents):
            return "resource_text", resource_text(uri, resource.text), None
        mime_type = declared_type(uri, resource.mime_type)
        kind = blob_kind(resource.blob, mime_type)
        if kind == "image":
            return "blob_image", resource_text(uri, ""), resource.blob
        if kind == "text":
            text = blob_text(resource.blob, mime_type)
            if text is not None:
                return "blob_text", resource_text(uri, text), None
        return "blob_other", t.non_text_note("resource"), None
    return "unknown", t.non_text_note("resource"), None  # newer than this code: say so


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """A result's blocks classified, and the image payloads the recipient gets, before any
    image is normalized."""

    blocks: list[PlannedBlock]
    payloads: list[str]
    at: list[int]  # the block of each payload


def draft(content: Sequence[ContentBlock], recipient: Recipient, language: Language) -> Draft:
    blocks: list[PlannedBlock] = []
    payloads: list[str] = []
    at: list[int] = []
    for position, block in enumerate(content):
        audience = audience_of(block)
        kind, text, payload = _classified(block, language)
        slot = None
        if payload is not None and (recipient == "client" or audience != "user"):
            slot = len(payloads)
            payloads.append(payload)
            at.append(position)
        blocks.append(PlannedBlock(kind=kind, audience=audience, text=text, slot=slot))
    return Draft(blocks=blocks, payloads=payloads, at=at)


def slots_of(draft: Draft, images: ResultImages) -> list[ImageSlot]:
    """Each image payload's slot, from the normalization of `draft.payloads`."""
    drops = {drop.index: drop for drop in images.dropped}
    places = iter(kept_places(len(images.kept), images.dropped))
    by_place = {next(places): image for image in images.kept}
    return [ImageSlot(block=block, image=by_place.get(index), drop=drops.get(index))
            for index, block in enumerate(draft.at)]


async def plan_for_model(content: Sequence[ContentBlock], *, is_error: bool,
                         language: Language, limits: ImageLimits,
                         reads: Sequence[LinkRead] = ()) -> ResultPlan:
    """The plan of a tool result a turn's model reads (`content`: the server's blocks, with what
    its linked resources held after each link; `reads`: those reads)."""
    drafted = draft(content, "model", language)
    images = (await normalize_result_images_async(drafted.payloads, limits) if drafted.payloads
              else ResultImages([], []))
    return ResultPlan(recipient="model", language=language, limits=limits,
                      content=list(content), blocks=drafted.blocks,
                      slots=slots_of(drafted, images),
                      is_error=is_error, reads=list(reads))


def blob_of(block: EmbeddedResource) -> BlobResourceContents:
    resource = block.resource
    assert isinstance(resource, BlobResourceContents)
    return resource
