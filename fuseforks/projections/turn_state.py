"""The turn's state as a pure fold: the message list, the images on it, and the RepeatGuard.

The engine decides every next step from this state and nothing else — there is no second copy of
the message list. Replay folds the same events into the same state, so what the provider received
on any round can be shown again without pixels.

The message list is kept as entries: a tool result remembers its body, the digests of the images
still attached, and whether it has been told (once) that earlier images were omitted or that images
could not be sent. The sentences themselves are added when messages are built
(`fuseforks.projections.messages`), in the village language.
"""

from __future__ import annotations

from typing import assert_never

import msgspec

from fuseforks.core.names import REPEAT_LIMIT, LearnedOutcome, Placement
from fuseforks.events.types import (
    FallbackSettled,
    ImageCut,
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
    ToolCallRecord,
    ToolResultRecorded,
    ToolsChanged,
    TurnEnded,
    TurnEvent,
    TurnInterrupted,
    TurnNotStarted,
    TurnStarted,
    TurnTakenOver,
)


class UserEntry(msgspec.Struct, frozen=True):
    text: str


class AssistantEntry(msgspec.Struct, frozen=True):
    text: str
    tool_calls: tuple[ToolCallRecord, ...]


class ToolEntry(msgspec.Struct, frozen=True, kw_only=True):
    call_id: str
    name: str
    body: str
    is_error: bool
    images: tuple[str, ...] = ()
    offsets: tuple[int, ...] = ()
    """Where in `body` each image sits (server order); empty: the wire's own order."""
    omitted: bool = False
    """Images from earlier rounds were cut by the per-request cap (noted once)."""
    not_sent: bool = False
    """Images could not be sent to this model (noted once)."""
    lost: bool = False
    """Images were held by a process that stopped before the turn was taken over (noted once)."""


Entry = UserEntry | AssistantEntry | ToolEntry
RepeatKey = tuple[str, str, str, tuple[str, ...]]


class TurnState(msgspec.Struct, frozen=True, kw_only=True):
    started: TurnStarted | None = None
    round: int = 0
    entries: tuple[Entry, ...] = ()
    images: dict[str, ImageMeta] = {}
    calls: dict[str, ToolCalled] = {}
    repeats: dict[RepeatKey, int] = {}
    repeat_hit: str | None = None
    """Name of the tool whose result identity reached the limit, until the stop is recorded."""
    fallback_active: bool = False
    placement: Placement = "native"
    """Where requests put tool images now: the turn's placement, until the ladder moves them."""
    learned: frozenset[tuple[Placement, LearnedOutcome]] = frozenset()
    last_response: ResponseReceived | None = None
    ended: TurnEnded | None = None

    @property
    def attached_images(self) -> list[tuple[str, str]]:
        """(call_id, digest) of every image on the message list, oldest first."""
        return [
            (entry.call_id, digest)
            for entry in self.entries
            if isinstance(entry, ToolEntry)
            for digest in entry.images
        ]


def repeat_key(called: ToolCalled | None, result: ToolResultRecorded) -> RepeatKey:
    """Identity of a result: tool, arguments, body text and the digests of its images."""
    arguments = called.arguments if called is not None else "{}"
    return (result.name, arguments, result.body, tuple(result.image_digests))


def _replace_tool_entries(state: TurnState, change: dict[str, ToolEntry]) -> tuple[Entry, ...]:
    return tuple(
        change.get(entry.call_id, entry) if isinstance(entry, ToolEntry) else entry
        for entry in state.entries
    )


def _in_call_order(entries: tuple[Entry, ...], entry: ToolEntry) -> tuple[Entry, ...]:
    """`entries` with `entry` among the results of its round in the order of the calls: results
    are recorded as the tools finish, and a provider reads them in the order it asked for them."""
    start = len(entries)
    while start and isinstance(entries[start - 1], ToolEntry):
        start -= 1
    asked = entries[start - 1] if start else None
    order = ([c.call_id for c in asked.tool_calls] if isinstance(asked, AssistantEntry) else [])
    if entry.call_id not in order:
        return (*entries, entry)
    rank = order.index(entry.call_id)

    def rank_of(other: Entry) -> int:
        return (order.index(other.call_id)
                if isinstance(other, ToolEntry) and other.call_id in order else -1)

    at = next((i for i in range(start, len(entries)) if rank_of(entries[i]) > rank), len(entries))
    return (*entries[:at], entry, *entries[at:])


def evolve_turn(state: TurnState, event: TurnEvent) -> TurnState:
    replace = msgspec.structs.replace
    match event:
        case TurnStarted():
            history: list[Entry] = []
            for exchange in event.history:
                history += [UserEntry(exchange.request), AssistantEntry(exchange.answer, ())]
            return replace(state, started=event, placement=event.placement,
                           entries=(*history, UserEntry(event.request)))
        case RoundStarted():
            return replace(state, round=event.round)
        case ResponseReceived():
            answer = AssistantEntry(event.text, tuple(event.tool_calls))
            return replace(state, entries=(*state.entries, answer), last_response=event)
        case ToolCalled():
            return replace(state, calls={**state.calls, event.call_id: event})
        case ImagesNormalized():
            return replace(state, images={**state.images, **{m.digest: m for m in event.images}})
        case ToolResultRecorded():
            key = repeat_key(state.calls.get(event.call_id), event)
            count = state.repeats.get(key, 0) + 1
            entry = ToolEntry(
                call_id=event.call_id,
                name=event.name,
                body=event.body,
                is_error=not event.ok,
                images=tuple(event.image_digests) if event.attached else (),
                offsets=tuple(event.image_offsets) if event.attached else (),
                not_sent=bool(event.image_digests) and not event.attached,
            )
            return replace(
                state,
                entries=_in_call_order(state.entries, entry),
                repeats={**state.repeats, key: count},
                repeat_hit=event.name if count >= REPEAT_LIMIT and not state.repeat_hit
                else state.repeat_hit,
            )
        case ImagesCapped():
            cut = {c.call_id: c.keep for c in event.cuts}
            change = {
                e.call_id: replace(e, images=e.images[: cut[e.call_id]],
                                   offsets=e.offsets[: cut[e.call_id]], omitted=True)
                for e in state.entries
                if isinstance(e, ToolEntry) and e.call_id in cut
            }
            return replace(state, entries=_replace_tool_entries(state, change))
        case ImagesStripped():
            change = {
                e.call_id: replace(e, images=(), offsets=(), not_sent=True)
                for e in state.entries
                if isinstance(e, ToolEntry) and e.images
            }
            return replace(state, entries=_replace_tool_entries(state, change),
                           fallback_active=True)
        case TurnTakenOver():
            lost = set(event.images_lost)
            change = {
                e.call_id: replace(e, images=tuple(d for d in e.images if d not in lost),
                                   offsets=(), lost=True)
                for e in state.entries
                if isinstance(e, ToolEntry) and lost.intersection(e.images)
            }
            return replace(state, entries=_replace_tool_entries(state, change))
        case PlacementChanged():
            return replace(state, placement=event.placement)
        case PlacementLearned():
            return replace(state, learned=state.learned | {(event.placement, event.outcome)})
        case RepeatDetected():
            return replace(state, repeat_hit=None)
        case TurnEnded():
            return replace(state, ended=event)
        case (
            TurnNotStarted()
            | RequestSent()
            | LlmRetried()
            | LlmRetryStopped()
            | JpegResent()
            | ImagesDropped()
            | ResourceRead()
            | RequestRefused()
            | FallbackSettled()
            | TurnInterrupted()
        ):
            return state
        case SessionStarted() | ToolsChanged() | ResultSent() | SessionEnded():
            return state  # a gateway session's kinds: a turn never holds them
        case _:
            assert_never(event)


def plan_cap(state: TurnState, cap: int) -> list[ImageCut]:
    """Which results lose images so that at most `cap` stay, newest kept.

    Walking from the newest result back, each keeps as many of its *first* images as the remaining
    allowance covers; everything older loses all of its images.
    """
    allowance = cap
    cuts: list[ImageCut] = []
    for entry in reversed(state.entries):
        if not isinstance(entry, ToolEntry) or not entry.images:
            continue
        keep = min(len(entry.images), allowance)
        allowance -= keep
        if keep < len(entry.images):
            cuts.append(ImageCut(call_id=entry.call_id, keep=keep,
                                 removed=len(entry.images) - keep))
    cuts.reverse()
    return cuts
