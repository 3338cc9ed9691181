"""A gateway session's state as a pure fold, and the decisions read from it: the result cap.

The gateway decides from this state the way the engine decides from `TurnState`: a result's
images are cut to the client's limit on a whole result (`plan_result_cap`), and what goes back to
the client (`sent_images`, `result_notes`) is read from the folded events, so replay shows what
each client received without a pixel.
"""

from __future__ import annotations

from typing import assert_never

import msgspec

from fuseforks.core.media import base64_size
from fuseforks.core.texts import texts
from fuseforks.events.types import (
    FallbackSettled,
    ImageCut,
    ImageDrop,
    ImageMeta,
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
from fuseforks.projections.notes import image_notes


class SessionCall(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call of a session and what became of it."""

    called: ToolCalled
    images: tuple[ImageMeta, ...] = ()
    drops: tuple[ImageDrop, ...] = ()
    result: ToolResultRecorded | None = None
    keep: int | None = None
    """How many of the result's first images the cap left (None: not capped)."""
    sent: ResultSent | None = None


class SessionState(msgspec.Struct, frozen=True, kw_only=True):
    started: SessionStarted | None = None
    calls: dict[str, SessionCall] = {}
    """By call id, in the order the calls began."""
    ended: SessionEnded | None = None

    @property
    def count(self) -> int:
        """Calls begun so far (the `round` of the last one)."""
        return len(self.calls)

    @property
    def unanswered(self) -> list[str]:
        """Calls begun that have no result yet, in the order they began."""
        return [call_id for call_id, call in self.calls.items() if call.result is None]


def _with_call(state: SessionState, call_id: str, **changes: object) -> SessionState:
    call = state.calls.get(call_id)
    if call is None:
        return state
    return msgspec.structs.replace(
        state, calls={**state.calls, call_id: msgspec.structs.replace(call, **changes)})


def evolve_session(state: SessionState, event: TurnEvent) -> SessionState:
    replace = msgspec.structs.replace
    match event:
        case SessionStarted():
            return replace(state, started=event)
        case ToolCalled():
            return replace(state, calls={**state.calls, event.call_id: SessionCall(called=event)})
        case ImagesNormalized():
            return _with_call(state, event.call_id, images=tuple(event.images))
        case ImagesDropped():
            return _with_call(state, event.call_id, drops=tuple(event.drops))
        case ToolResultRecorded():
            return _with_call(state, event.call_id, result=event)
        case ImagesCapped():
            for cut in event.cuts:
                state = _with_call(state, cut.call_id, keep=cut.keep)
            return state
        case ResultSent():
            return _with_call(state, event.call_id, sent=event)
        case SessionEnded():
            return replace(state, ended=event)
        case ToolsChanged():
            return state  # what is offered decides nothing about a call's result
        case (
            TurnStarted()
            | TurnNotStarted()
            | RoundStarted()
            | RequestSent()
            | ResponseReceived()
            | LlmRetried()
            | LlmRetryStopped()
            | JpegResent()
            | RequestRefused()
            | PlacementChanged()
            | PlacementLearned()
            | ImagesStripped()
            | FallbackSettled()
            | RepeatDetected()
            | TurnInterrupted()
            | TurnTakenOver()
            | ResourceRead()
            | TurnEnded()
        ):
            return state  # a turn's kinds: a session never holds them (its client reads links)
        case _:
            assert_never(event)


def plan_result_cap(state: SessionState, call_id: str) -> ImageCut | None:
    """How many of a result's first images fit the client's limit on a whole result, when not
    all do (`ResultLimits.images_kept`, from the recorded sizes). None when the result fits (or
    the client has no such limit)."""
    assert state.started is not None
    call = state.calls[call_id]
    result = call.result
    if result is None or not result.image_digests:
        return None
    sizes = {meta.digest: meta.size for meta in call.images}
    images = [base64_size(sizes[digest]) for digest in result.image_digests]
    keep = state.started.result_limits.images_kept(result.bytes_without_images, images)
    if keep == len(images):
        return None
    return ImageCut(call_id=call_id, keep=keep, removed=len(images) - keep)


def sent_images(state: SessionState, call_id: str) -> list[str]:
    """Digests of the images the client gets with the result, in the result's order."""
    call = state.calls[call_id]
    if call.result is None:
        return []
    digests = list(call.result.image_digests)
    return digests if call.keep is None else digests[: call.keep]


def result_notes(state: SessionState, call_id: str) -> list[str]:
    """What the gateway adds to a result besides the server's own content, in the session's
    village language: the notes on its images (`image_notes`, as the plan wrote them), then one
    for images the cap left out."""
    started = state.started
    assert started is not None
    call = state.calls[call_id]
    notes = image_notes(started.language, started.limits.max_images, call.images, call.drops)
    if call.result is not None and call.keep is not None:
        removed = len(call.result.image_digests) - call.keep
        if removed:
            notes.append(texts(started.language).result_capped_note(removed))
    return notes


class CallView(msgspec.Struct, frozen=True, kw_only=True):
    """One call of a recorded session as replay shows it: what the server gave, what the client
    got (images by digest, format and size), and the notes the gateway added."""

    call: int
    call_id: str
    tool: str
    server: str
    arguments: str
    ok: bool | None
    """None: the call has no result in the record."""
    fault: str | None
    body: str
    images: list[str]
    """Each image the result kept: `digest FORMAT WxH SIZE B (path from SOURCE [WxH])`."""
    sent: list[str]
    """Digests of the images the client was sent (after the cap)."""
    notes: list[str]


def call_views(state: SessionState) -> list[CallView]:
    views = []
    for number, (call_id, call) in enumerate(state.calls.items(), start=1):
        result = call.result
        images = [f"{m.digest} {m.media_type.removeprefix('image/').upper()} "
                  f"{m.width}x{m.height} {m.size} B ({m.path} from {m.source_format}"
                  f"{f' {m.source_width}x{m.source_height}' if m.source_width else ''})"
                  for m in call.images]
        views.append(CallView(
            call=number, call_id=call_id, tool=call.called.name, server=call.called.server,
            arguments=call.called.arguments, ok=None if result is None else result.ok,
            fault=None if result is None else result.fault,
            body="" if result is None else result.body, images=images,
            sent=list(call.sent.images) if call.sent is not None else [],
            notes=result_notes(state, call_id) if state.started is not None else []))
    return views
