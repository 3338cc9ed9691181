"""The canonical message list of a turn, built from its state — the turn layer's sentences included.

This is where the turn layer writes in the village language: the carrier caption handed to the
adapters, "(images from earlier rounds were omitted)" and "(images could not be sent to this
model)". Each note is a flag on the entry, so it is written once however often the list is built.
Carriers are appended after their results and the list is rebuilt identically on every round, so a
provider's prefix cache stays valid until the cap removes an image.
"""

from __future__ import annotations

from typing import Any

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    ImageRef,
    Message,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.events.types import ImageDelivery, ToolCallRecord
from fuseforks.projections.turn_state import AssistantEntry, ToolEntry, TurnState, UserEntry

_arguments = msgspec.json.Decoder(dict[str, Any])


def tool_call(record: ToolCallRecord) -> ToolCall:
    return ToolCall(
        id=record.call_id,
        name=record.name,
        arguments=_arguments.decode(record.arguments),
        signature="".join(record.signature) or None,
    )


def tool_text(entry: ToolEntry, language: Language) -> str:
    t = texts(language)
    notes = []
    if entry.omitted:
        notes.append(t.omitted_note())
    if entry.not_sent:
        notes.append(t.not_sent_note())
    if entry.lost:
        notes.append(t.lost_note())
    return "\n".join([entry.body, *notes]) if entry.body else "\n".join(notes)


def chat_messages(state: TurnState) -> list[Message]:
    assert state.started is not None, "a turn's messages need its TurnStarted"
    language = state.started.language
    messages: list[Message] = []
    for entry in state.entries:
        match entry:
            case UserEntry():
                messages.append(UserMessage(text=entry.text))
            case AssistantEntry():
                messages.append(AssistantMessage(
                    text=entry.text, tool_calls=[tool_call(c) for c in entry.tool_calls]))
            case ToolEntry():
                # A recording that lost an image's ImagesNormalized (an edited or damaged stream)
                # still folds: the image is known by its digest alone.
                refs = [
                    ImageRef(digest=d, media_type=meta.media_type if meta else "",
                             size=meta.size if meta else 0)
                    for d in entry.images
                    for meta in (state.images.get(d),)
                ]
                caption = texts(language).carrier_caption(entry.name, len(refs)) if refs else None
                messages.append(ToolResultMessage(
                    tool_call_id=entry.call_id, name=entry.name, text=tool_text(entry, language),
                    images=refs, caption=caption, is_error=entry.is_error,
                    image_offsets=list(entry.offsets)))
    return messages


def tool_specs(state: TurnState) -> list[ToolSpec]:
    assert state.started is not None
    return [
        ToolSpec(name=t.name, description=t.description,
                 input_schema=_arguments.decode(t.input_schema))
        for t in state.started.tools
    ]


def chat_request(state: TurnState, *, summary: bool = False) -> ChatRequest:
    """The request of the next call, exactly as the state says the provider should receive it.

    `summary`: the closing summary call, whose system prompt ends with the recorded instruction."""
    started = state.started
    assert started is not None
    suffix = started.summary_instruction if summary else ""
    system = "\n\n".join(s for s in (started.system, suffix) if s) or None
    return ChatRequest(
        model=started.model,
        messages=chat_messages(state),
        tools=tool_specs(state),
        system=system,
        placement=state.placement,
    )


def carried_images(state: TurnState) -> list[ImageDelivery]:
    """Every tool image the next request carries, and where the turn's wire puts it."""
    placement = state.placement
    return [
        ImageDelivery(digest=digest, call_id=call_id, placement=placement)
        for call_id, digest in state.attached_images
    ]
