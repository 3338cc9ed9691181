"""What replay shows of a recorded turn: each request as the provider received it, and the
RepeatGuard per round — folded from the events, with images as `digest, format, size` (there are
no pixels to show)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from fuseforks.core.media import format_name
from fuseforks.core.names import RequestPurpose, WireName
from fuseforks.events.codec import Envelope
from fuseforks.events.types import RequestSent, RoundStarted, TurnEnded
from fuseforks.projections.messages import chat_request
from fuseforks.projections.turn_state import TurnState, evolve_turn


class MessageView(msgspec.Struct, frozen=True, kw_only=True):
    role: str
    text: str
    tool_calls: list[str] = []
    images: list[str] = []
    caption: str | None = None


class RequestView(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    round: int
    purpose: RequestPurpose
    wire: WireName
    model: str
    endpoint_host: str
    system: str | None
    messages: list[MessageView]


class RepeatView(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    tool: str
    arguments: str
    body_chars: int
    images: int
    count: int


def image_label(digest: str, state: TurnState) -> str:
    meta = state.images.get(digest)
    if meta is None:
        return digest
    return f"{digest}, {format_name(meta.media_type)}, {meta.size} B"


def message_view(message: Message, state: TurnState, alternate: bool) -> MessageView:
    match message:
        case SystemMessage():
            return MessageView(role="system", text=message.text)
        case UserMessage():
            return MessageView(role="user", text=message.text)
        case AssistantMessage():
            return MessageView(role="assistant", text=message.text, tool_calls=[
                f"{c.name} {msgspec.json.encode(c.arguments).decode()}" for c in message.tool_calls])
        case ToolResultMessage():
            caption = message.caption if alternate else None  # native wires do not place it
            return MessageView(role="tool", text=message.text, caption=caption,
                               images=[image_label(i.digest, state) for i in message.images])
    raise AssertionError(f"unknown message {message!r}")


def request_views(history: Iterable[Envelope]) -> list[RequestView]:
    state = TurnState()
    views: list[RequestView] = []
    for envelope in history:
        event = envelope.event
        if isinstance(event, RequestSent) and state.started is not None:
            request = chat_request(state, summary=event.summary)
            alternate = state.placement == "alternate"
            views.append(RequestView(
                seq=envelope.seq, round=event.round, purpose=event.purpose, wire=event.wire,
                model=event.model, endpoint_host=event.endpoint_host, system=request.system,
                messages=[message_view(m, state, alternate) for m in request.messages]))
        state = evolve_turn(state, event)
    return views


def repeat_views(history: Iterable[Envelope]) -> list[RepeatView]:
    """The RepeatGuard's counts at the end of every round."""
    state = TurnState()
    views: list[RepeatView] = []

    def snapshot() -> None:
        for (tool, arguments, body, digests), count in state.repeats.items():
            views.append(RepeatView(round=state.round, tool=tool, arguments=arguments,
                                    body_chars=len(body), images=len(digests), count=count))

    for envelope in history:
        if isinstance(envelope.event, RoundStarted | TurnEnded) and state.round:
            snapshot()
        state = evolve_turn(state, envelope.event)
    return views
