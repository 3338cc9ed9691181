"""The canonical request and response every wire adapter maps from and to.

The turn layer builds these; adapters only place what they are given. Images travel as references
(`ImageRef`) so a request can be rebuilt on every round without copying pixels: the bytes live in
the turn's `ImageVault` and are looked up by digest at encode time.
"""

from __future__ import annotations

from typing import Any

import msgspec

from fuseforks.core.names import Placement


class ImageRef(msgspec.Struct, frozen=True, kw_only=True):
    """An image held by the turn's vault: SHA-256 hex digest of the bytes that will be sent."""

    digest: str
    media_type: str
    size: int


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """One function call the model asked for.

    `signature` carries Gemini's opaque `thoughtSignature`, which must be echoed on the
    `functionCall` part of the next request; other wires leave it empty.
    """

    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    signature: str | None = None


class SystemMessage(msgspec.Struct, frozen=True, kw_only=True, tag="system", tag_field="role"):
    text: str


class UserMessage(msgspec.Struct, frozen=True, kw_only=True, tag="user", tag_field="role"):
    text: str


class AssistantMessage(msgspec.Struct, frozen=True, kw_only=True, tag="assistant", tag_field="role"):
    text: str = ""
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)


class ToolResultMessage(msgspec.Struct, frozen=True, kw_only=True, tag="tool", tag_field="role"):
    """The output of one tool call.

    `caption` is the carrier caption written by the turn layer in the village language; only the
    alternate placement puts it anywhere (openai-compat always, every wire when the request asks
    for it).
    """

    tool_call_id: str
    name: str
    text: str
    images: list[ImageRef] = msgspec.field(default_factory=list)
    caption: str | None = None
    is_error: bool = False
    image_offsets: list[int] = msgspec.field(default_factory=list)
    """Where in `text` each image sat among the server's blocks; empty: no order to keep."""

    def in_order(self) -> list[str | ImageRef] | None:
        """Text pieces and images in the server's order, or None when there is no order to
        keep (no images, or no offsets recorded for them)."""
        if not self.images or len(self.image_offsets) != len(self.images):
            return None
        items: list[str | ImageRef] = []
        start = 0
        for image, offset in zip(self.images, self.image_offsets, strict=True):
            if piece := self.text[start:offset].strip("\n"):
                items.append(piece)
            items.append(image)
            start = max(start, offset)
        if rest := self.text[start:].strip("\n"):
            items.append(rest)
        return items


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    description: str
    input_schema: dict[str, Any]


class ChatRequest(msgspec.Struct, frozen=True, kw_only=True):
    model: str
    messages: list[Message]
    tools: list[ToolSpec] = msgspec.field(default_factory=list)
    system: str | None = None
    max_tokens: int | None = None
    """The output-token limit; None: the wire's own rule (Anthropic, which requires one, sends
    its default; the others send none). Which parameter carries it is wire data
    (`Wire.parameters`)."""
    temperature: float | None = None
    placement: Placement | None = None
    """Where tool images go; None: the wire's own placement (`Wire.placement`). "alternate":
    each tool result carries its text only, and one user-role message right after the run of tool
    results carries, per result with images, its caption then its images — on every wire."""


class Usage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Token counts of one response, meaning the same on every wire.

    `input_tokens`: every prompt token the provider processed, cached ones included.
    `cache_read_tokens` (read from a prompt cache) and `cache_write_tokens` (written to it) are
    parts of `input_tokens`, never in addition to it. `output_tokens`: every generated token,
    reasoning ("thinking") tokens included. Each wire maps its provider's report to this: Anthropic
    reports `input_tokens` without `cache_read_input_tokens` and `cache_creation_input_tokens`, so
    the three are added; OpenAI's `prompt_tokens` and the Responses `input_tokens` include their
    `cached_tokens`; Gemini's `promptTokenCount` includes `cachedContentTokenCount` (and
    `toolUsePromptTokenCount` is added), its `thoughtsTokenCount` is added to the output.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class ChatResponse(msgspec.Struct, frozen=True, kw_only=True):
    """What a provider answered, mapped to one shape.

    `stop_reason` is normalized: "end_turn", "tool_use", "max_tokens", "content_filter", or the
    provider's own word when it is none of those.
    """

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    stop_reason: str
    raw_model: str


def system_texts(request: ChatRequest) -> list[str]:
    """Every system text of a request in order: the `system` field first, then system messages."""
    texts = [request.system] if request.system else []
    texts.extend(m.text for m in request.messages if isinstance(m, SystemMessage))
    return texts


def has_images(request: ChatRequest) -> bool:
    """The request carries tool images (on its tool results, whatever their placement)."""
    return any(isinstance(m, ToolResultMessage) and m.images for m in request.messages)
