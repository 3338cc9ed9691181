"""The `fuseforks.log` projection: one `key=value` line per fact (docs/log-format.md).

Lines never hold image content or keys — only counts, names, reasons and outcomes. `images=` appears
on a `tool:` line only when the result carried images, so a text-only tool's line is exactly what a
text-only engine wrote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import assert_never

import msgspec

from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    FallbackSettled,
    ImagesCapped,
    ImagesDropped,
    ImagesNormalized,
    ImagesStripped,
    JpegResent,
    LlmRetried,
    LlmRetryStopped,
    PlacementChanged,
    PlacementLearned,
    RepeatDetected,
    RequestRefused,
    RequestSent,
    ResourceRead,
    ResponseReceived,
    ResultSent,
    RoundStarted,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    ToolsChanged,
    TurnEnded,
    TurnEvent,
    TurnInterrupted,
    TurnNotStarted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.projections.fold import fold
from fuseforks.projections.words import call_end

_CALL_END_LINES = {"refused": "llm refused", "failed": "llm failed", "gave_up": "llm retry stop"}
"""The line of a model call the HTTP edge gave up on, by how it ended (`call_end`): a refusal is
not a retry, so it is not logged as one."""

class LogState(msgspec.Struct, frozen=True, kw_only=True):
    agent: str = "-"
    agent_token: str = "-"
    """`agent` as written in a line, quoted once per turn instead of once per line."""
    wire: str = "-"
    model: str = "-"
    client: str = "-"
    """A gateway session's client and its version (`claude-code 2.1.0`)."""
    lines: tuple[str, ...] = ()


_NEEDS_QUOTES = re.compile(r'[\s="]|^$')


def value(raw: object) -> str:
    """A field value as written in a line: bare when it is one token, JSON-quoted otherwise."""
    if raw is True:
        return "true"
    if raw is False:
        return "false"
    text = str(raw)
    if _NEEDS_QUOTES.search(text) is None:
        return text
    return msgspec.json.encode(text).decode()



def _status(status: int | None) -> str:
    return "-" if status is None else str(status)


def render(state: LogState, event: TurnEvent) -> list[str]:
    """The lines one event adds, given the turn's context so far.

    Written as plain f-strings: this runs once per event on every replay and read, so it stays cheap.
    Free-form values go through `value`; numbers and enumerated codes cannot need quoting.
    """
    agent = state.agent_token
    match event:
        # Most events add no line; matching them first keeps the common case to one test.
        case TurnStarted() | TurnNotStarted() | SessionStarted():
            return [
                f"tool server down: agent={agent} server={value(down.server)} "
                f"reason={value(down.reason)}"
                for down in event.servers_down
            ]
        case (
            RoundStarted()
            | RequestSent()
            | ResponseReceived()
            | ToolCalled()
            | ImagesNormalized()
            | RequestRefused()
            | ImagesStripped()
            | PlacementLearned()
            | ResultSent()
            | ToolsChanged()
        ):
            return []
        case ToolResultRecorded():
            text = (
                f"tool: agent={agent} round={event.round} name={value(event.name)} "
                f"ok={'true' if event.ok else 'false'} body_chars={len(event.body)}"
            )
            if event.image_digests:
                text += f" images={len(event.image_digests)}"
            return [text]
        case ResourceRead():
            return [
                f"tool resource read: agent={agent} round={event.round} uri={value(event.uri)} "
                f"outcome={event.outcome} bytes={event.size}"
            ]
        case ImagesDropped():
            name = value(event.name)
            return [
                f"tool image dropped: agent={agent} name={name} reason={drop.reason}"
                for drop in event.drops
            ]
        case ImagesCapped():
            return [
                f"tool image capped: agent={agent} round={event.round} removed={event.removed} "
                f"kept={event.kept}"
            ]
        case PlacementChanged():
            return [
                f"tool image placement: agent={agent} round={event.round} "
                f"model={value(event.model)} placement={event.placement}"
            ]
        case FallbackSettled():
            return [
                f"tool image fallback: agent={agent} model={value(event.model)} "
                f"removed={event.removed} outcome={event.outcome}"
            ]
        case LlmRetried():
            return [
                f"llm retry: agent={agent} round={event.round} attempt={event.attempt} "
                f"status={_status(event.status)} class={value(event.error_class)} "
                f"delay_ms={event.delay_ms}"
            ]
        case LlmRetryStopped():
            end = call_end(event)
            attempts = f" attempts={event.attempt}" if end == "gave_up" else ""
            return [
                f"{_CALL_END_LINES[end]}: agent={agent} round={event.round}{attempts} "
                f"status={_status(event.status)} class={value(event.error_class)} "
                f"code={value(event.code or '-')}"
            ]
        case JpegResent():
            return [
                f"attachment fallback: agent={agent} model={value(event.model)} "
                f"converted={event.converted}"
            ]
        case RepeatDetected():
            return [
                f"tool repeat: agent={agent} round={event.round} name={value(event.name)} "
                f"count={event.count}"
            ]
        case TurnInterrupted():
            return [
                f"turn interrupted: agent={agent} round={event.round} cause={event.cause} "
                f"during={event.during}"
            ]
        case TurnTakenOver():
            taken_from = f" from={value(event.taken_from)}" if event.taken_from else ""
            return [
                f"turn taken over: agent={agent} round={event.round} worker={value(event.worker)}"
                f"{taken_from} images_lost={len(event.images_lost)} "
                f"calls_lost={len(event.calls_lost)}"
            ]
        case TurnEnded():
            return [
                f"turn: agent={agent} backend={value(state.wire)} model={value(state.model)} "
                f"rounds={event.rounds} stop={event.stop}"
            ]
        case SessionEnded():
            unanswered = f" unanswered={len(event.unanswered)}" if event.unanswered else ""
            return [
                f"session: agent={agent} client={value(state.client)} calls={event.calls} "
                f"stop={event.cause}{unanswered}"
            ]
        case _:
            assert_never(event)


SILENT: frozenset[type] = frozenset({
    RoundStarted, RequestSent, ResponseReceived, ToolCalled, ImagesNormalized, RequestRefused,
    ImagesStripped, PlacementLearned, ResultSent, ToolsChanged,
})
"""Kinds that add no line (besides `TurnStarted`, `TurnNotStarted` and `SessionStarted`, which set
the context): skipped before `render`, because most of a turn's events are of these kinds and this
fold runs on every read."""


def evolve_log(state: LogState, event: TurnEvent) -> LogState:
    if type(event) in SILENT:
        return state
    if isinstance(event, TurnStarted | TurnNotStarted):
        state = LogState(agent=event.agent, agent_token=value(event.agent), wire=event.wire,
                         model=event.model, lines=state.lines)
    elif isinstance(event, SessionStarted):
        client = f"{event.client} {event.client_version}".strip()
        state = LogState(agent=event.agent, agent_token=value(event.agent), client=client,
                         lines=state.lines)
    added = render(state, event)
    if not added:
        return state
    return msgspec.structs.replace(state, lines=state.lines + tuple(added))


_MINTED = re.compile(r"turn-[0-9a-f]{32}")


def short_turn_id(turn_id: str) -> str:
    """Enough of a turn id to tell turns apart where several are printed together: a minted id
    (`turn-` and 32 hex digits) by its first 8 digits, a prefix `log --turn` takes back; an id
    a program chose, whole."""
    return turn_id[:13] if _MINTED.fullmatch(turn_id) else turn_id


def turn_log(envelopes: Sequence[Envelope]) -> list[str]:
    """The log lines of one recorded turn. A turn whose record stops without `TurnEnded` (the
    process was killed, the machine lost power) gets a last line saying so; the record itself is
    never completed after the fact."""
    state = fold(evolve_log, LogState(), envelopes)
    lines = list(state.lines)
    if envelopes and isinstance(envelopes[0].event, SessionStarted):
        if not isinstance(envelopes[-1].event, SessionEnded):
            calls = sum(isinstance(e.event, ToolCalled) for e in envelopes)
            lines.append(f"session cut: agent={state.agent_token} client={value(state.client)} "
                         f"calls={calls} (no end recorded)")
        return lines
    if envelopes and not isinstance(envelopes[-1].event, TurnEnded):
        rounds = max((e.event.round for e in envelopes if isinstance(e.event, RoundStarted)),
                      default=0)
        lines.append(f"turn cut: agent={state.agent_token} backend={value(state.wire)} "
                     f"model={value(state.model)} rounds={rounds} (no end recorded)")
    return lines
