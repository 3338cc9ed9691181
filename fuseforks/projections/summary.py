"""A turn in a few numbers: the row `fuseforks turns` prints, the console lists and the read
model keeps, and the token totals `fuseforks replay` reports and the console shows. A gateway
session is summed up in the same row: `gateway` for its wire, its client where a model would be,
its calls for rounds.

The images, counted once for every reader: `images_sent` is how many tool images the turn's
requests carried — one per image block of a tool result, so one picture that two tools returned
counts twice, and an image carried again in a later round counts once — and
`images_received` how many of those reached the model in a request it answered. A turn whose
images were refused says how often (`refusals`: requests with images the provider refused) and
how many the fallback took off (`stripped`). For a gateway session every image it sent its
client is sent and received.

Kept here, below every reader, and incremental (`evolve_summary`), so that the read model keeps
a turn's row as it is recorded and a command and the console never count the same turn two
ways.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from fuseforks.core.names import SessionEndCause
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImagesStripped,
    ResponseReceived,
    ResultSent,
    RoundStarted,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    TurnEnded,
    TurnNotStarted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.projections.audit import at_key
from fuseforks.projections.deliveries import Deliveries, TurnStop, evolve_deliveries


class TurnSummary(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    agent: str
    wire: str
    model: str
    started: str
    """When the turn started (its first event's time)."""
    rounds: int
    stop: TurnStop | SessionEndCause
    """How the turn ended; `cut` when its record has no end (the process died, or it is still
    running)."""
    images_sent: int
    """Tool images its requests carried (see the module's note); for a gateway session, the
    images it sent its client."""
    images_received: int = 0
    """Of those, the images a request the provider answered carried."""
    refusals: int = 0
    """Requests with tool images the provider refused."""
    stripped: int = 0
    """Tool images the image fallback took off the message list."""
    events: int
    taken_over: int = 0
    """Times another worker took the turn over (its process died, or handed it back)."""
    conversation: str = ""
    """The turn's conversation id; empty outside a conversation (and for a gateway session)."""


class SummaryState(msgspec.Struct, frozen=True, kw_only=True):
    """The summary's fold over one turn's (or session's) events, in seq order."""

    turn_id: str = ""
    started: str = ""
    session: bool = False
    agent: str = "-"
    wire: str = "-"
    model: str = "-"
    conversation: str = ""
    max_round: int = 0
    ended_rounds: int | None = None
    stop: TurnStop | SessionEndCause = "cut"
    calls: int = 0
    client_images: int = 0
    stripped: int = 0
    events: int = 0
    taken_over: int = 0
    deliveries: Deliveries = Deliveries()


_COUNTED_ONLY = frozenset({"ImagesNormalized", "ImagesDropped", "ToolResultRecorded",
                           "ResourceRead", "LlmRetried", "LlmRetryStopped", "JpegResent",
                           "ImagesCapped", "PlacementChanged", "PlacementLearned",
                           "FallbackSettled", "RepeatDetected", "TurnInterrupted"})
"""Kinds a summary only counts (neither it nor the delivery fold reads them): most of a turn's
events, so this fold, run on every append, takes them in one step."""


def evolve_summary(state: SummaryState, envelope: Envelope) -> SummaryState:
    replace = msgspec.structs.replace
    event = envelope.event
    if state.events and envelope.kind in _COUNTED_ONLY:
        return replace(state, events=state.events + 1)
    state = replace(state, events=state.events + 1,
                    deliveries=evolve_deliveries(state.deliveries, envelope))
    if state.events == 1:
        state = replace(state, turn_id=envelope.turn_id, started=envelope.at)
    match event:
        case TurnStarted() | TurnNotStarted():
            return replace(state, agent=event.agent, wire=event.wire, model=event.model,
                           conversation=event.conversation_id)
        case SessionStarted() if state.events == 1:  # a record that begins so is a session's
            return replace(state, session=True, agent=event.agent, wire="gateway",
                           model=f"{event.client} {event.client_version}".strip())
        case RoundStarted():
            return replace(state, max_round=max(state.max_round, event.round))
        case ToolCalled():
            return replace(state, calls=state.calls + 1)
        case ResultSent():
            return replace(state, client_images=state.client_images + len(event.images))
        case ImagesStripped():
            return replace(state, stripped=state.stripped + event.removed)
        case TurnTakenOver():
            return replace(state, taken_over=state.taken_over + 1)
        case TurnEnded():
            return replace(state, ended_rounds=event.rounds, stop=event.stop)
        case SessionEnded():
            return replace(state, stop=event.cause)
        case _:
            return state


def summary_of(state: SummaryState) -> TurnSummary:
    if state.session:
        return TurnSummary(
            turn_id=state.turn_id, agent=state.agent, wire=state.wire, model=state.model,
            started=state.started, rounds=state.calls, stop=state.stop,
            images_sent=state.client_images, images_received=state.client_images,
            events=state.events)
    sent: set[tuple[str, str]] = set()
    received: set[tuple[str, str]] = set()
    refusals = 0
    for request in state.deliveries.requests:
        images = {(d.call_id, d.digest) for d in request.sent.images}
        sent |= images
        if request.outcome == "received":
            received |= images
        refusals += request.outcome == "refused" and bool(images)
    return TurnSummary(
        turn_id=state.turn_id, agent=state.agent, wire=state.wire, model=state.model,
        started=state.started,
        rounds=state.max_round if state.ended_rounds is None else state.ended_rounds,
        stop=state.stop, images_sent=len(sent), images_received=len(received),
        refusals=refusals, stripped=state.stripped, events=state.events,
        taken_over=state.taken_over, conversation=state.conversation)


def turn_summary(envelopes: Sequence[Envelope]) -> TurnSummary:
    """The summary of one turn's events (at least one), in seq order."""
    state = SummaryState()
    for envelope in envelopes:
        state = evolve_summary(state, envelope)
    return summary_of(state)


class SummaryFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which turns a list shows; a field left None matches every turn. `since` and `until` are
    `since_key`s (`fuseforks.projections.audit`): a turn started at or after `since` and before
    `until`; `conversation` is a conversation id or the beginning of one."""

    wire: str | None = None
    model: str | None = None
    stop: str | None = None
    conversation: str | None = None
    since: str | None = None
    until: str | None = None

    def keeps(self, summary: TurnSummary) -> bool:
        if self.since is not None or self.until is not None:
            at = at_key(summary.started)
            if at is None or (self.since is not None and at < self.since) or (
                    self.until is not None and at >= self.until):
                return False
        return ((self.wire is None or summary.wire == self.wire)
                and (self.model is None or summary.model == self.model)
                and (self.stop is None or summary.stop == self.stop)
                and (self.conversation is None
                     or summary.conversation.startswith(self.conversation)))


EVERY_TURN = SummaryFilter()


USAGE_FIELDS = ("responses", "input_tokens", "output_tokens", "cache_read_tokens",
                "cache_write_tokens")


def turn_usage(envelopes: Sequence[Envelope]) -> dict[str, int]:
    """The tokens the provider reported, summed over the turn's responses, and how many
    responses there were (keys in `USAGE_FIELDS` order)."""
    total = dict.fromkeys(USAGE_FIELDS, 0)
    for envelope in envelopes:
        if isinstance(envelope.event, ResponseReceived):
            total["responses"] += 1
            for field, value in msgspec.structs.asdict(envelope.event.usage).items():
                total[field] += value
    return total
