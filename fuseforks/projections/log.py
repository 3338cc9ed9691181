"""The `fuseforks.log` projection: one `key=value` line per fact (SPEC §7).

Lines never hold image content or keys — only counts, names, reasons and outcomes. `images=` appears
on a `tool:` line only when the result carried images, so a text-only tool's line is exactly what a
text-only engine wrote.
"""

from __future__ import annotations

from typing import assert_never

import msgspec

from fuseforks.events.types import (
    AttachmentFallback,
    FallbackSettled,
    ImagesCapped,
    ImagesDropped,
    ImagesNormalized,
    ImagesStripped,
    LlmRetried,
    LlmRetryStopped,
    RepeatDetected,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    WireRejected400,
)


class LogState(msgspec.Struct, frozen=True, kw_only=True):
    agent: str = "-"
    wire: str = "-"
    model: str = "-"
    lines: tuple[str, ...] = ()


def value(raw: object) -> str:
    """A field value as written in a line: bare when it is one token, JSON-quoted otherwise."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    text = str(raw)
    if text and not any(c.isspace() or c in '="' for c in text):
        return text
    return msgspec.json.encode(text).decode()


def line(head: str, **fields: object) -> str:
    return head + ": " + " ".join(f"{key}={value(raw)}" for key, raw in fields.items())


def render(state: LogState, event: TurnEvent) -> list[str]:
    """The lines one event adds, given the turn's context so far."""
    agent = state.agent
    match event:
        case ToolResultRecorded():
            fields: dict[str, object] = {
                "agent": agent,
                "round": event.round,
                "name": event.name,
                "ok": event.ok,
                "body_chars": len(event.body),
            }
            if event.image_digests:
                fields["images"] = len(event.image_digests)
            return [line("tool", **fields)]
        case ImagesDropped():
            return [
                line("tool image dropped", agent=agent, name=event.name, reason=drop.reason)
                for drop in event.drops
            ]
        case ImagesCapped():
            return [
                line("tool image capped", agent=agent, round=event.round, removed=event.removed,
                     kept=event.kept)
            ]
        case FallbackSettled():
            return [
                line("tool image fallback", agent=agent, model=event.model, removed=event.removed,
                     outcome=event.outcome)
            ]
        case LlmRetried():
            return [
                line("llm retry", agent=agent, round=event.round, attempt=event.attempt,
                     status=event.status if event.status is not None else "-",
                     **{"class": event.error_class}, delay_ms=event.delay_ms)
            ]
        case LlmRetryStopped():
            return [
                line("llm retry stop", agent=agent, round=event.round, attempt=event.attempt,
                     status=event.status if event.status is not None else "-",
                     **{"class": event.error_class}, code=event.code or "-")
            ]
        case AttachmentFallback():
            return [
                line("attachment fallback", agent=agent, model=event.model,
                     converted=event.converted)
            ]
        case RepeatDetected():
            return [
                line("tool repeat", agent=agent, round=event.round, name=event.name,
                     count=event.count)
            ]
        case TurnEnded():
            return [
                line("turn", agent=agent, backend=state.wire, model=state.model,
                     rounds=event.rounds, stop=event.stop)
            ]
        case (
            TurnStarted()
            | RoundStarted()
            | RequestSent()
            | ResponseReceived()
            | ToolCalled()
            | ImagesNormalized()
            | WireRejected400()
            | ImagesStripped()
        ):
            return []
        case _:
            assert_never(event)


def evolve_log(state: LogState, event: TurnEvent) -> LogState:
    if isinstance(event, TurnStarted):
        state = LogState(agent=event.agent, wire=event.wire, model=event.model, lines=state.lines)
    added = render(state, event)
    if not added:
        return state
    return msgspec.structs.replace(state, lines=state.lines + tuple(added))
