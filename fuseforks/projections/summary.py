"""A turn in a few numbers: the row `fuseforks turns` prints and the console lists, and the token
totals `fuseforks replay` reports and the console shows. A gateway session is summed up in the
same row: `gateway` for its wire, its client where a model would be, its calls for rounds.

Kept here, below every reader, so that a command and the console never count the same turn two
ways: both call these folds on the same events.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from fuseforks.core.names import SessionEndCause
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
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
from fuseforks.projections.audit import TurnStop
from fuseforks.projections.deliveries import deliveries


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
    """Distinct tool images its requests carried to the provider (refused requests included);
    for a gateway session, the images it sent its client."""
    events: int
    taken_over: int = 0
    """Times another worker took the turn over (its process died, or handed it back)."""


def turn_summary(envelopes: Sequence[Envelope]) -> TurnSummary:
    """The summary of one turn's events (at least one), in seq order."""
    if isinstance(envelopes[0].event, SessionStarted):
        return session_summary(envelopes)
    started = next((e.event for e in envelopes
                    if isinstance(e.event, TurnStarted | TurnNotStarted)), None)
    ended = next((e.event for e in reversed(envelopes) if isinstance(e.event, TurnEnded)), None)
    rounds = [e.event.round for e in envelopes if isinstance(e.event, RoundStarted)]
    sent = {d.digest for r in deliveries(envelopes).requests for d in r.sent.images}
    return TurnSummary(
        turn_id=envelopes[0].turn_id,
        agent=started.agent if started else "-",
        wire=started.wire if started else "-",
        model=started.model if started else "-",
        started=envelopes[0].at,
        rounds=ended.rounds if ended else max(rounds, default=0),
        stop=ended.stop if ended else "cut",
        images_sent=len(sent),
        events=len(envelopes),
        taken_over=sum(isinstance(e.event, TurnTakenOver) for e in envelopes),
    )


def session_summary(envelopes: Sequence[Envelope]) -> TurnSummary:
    """A gateway session's events (beginning with `SessionStarted`) as a turn's summary."""
    started = envelopes[0].event
    assert isinstance(started, SessionStarted)
    ended = envelopes[-1].event if isinstance(envelopes[-1].event, SessionEnded) else None
    sent = {d for e in envelopes if isinstance(e.event, ResultSent) for d in e.event.images}
    return TurnSummary(
        turn_id=envelopes[0].turn_id, agent=started.agent, wire="gateway",
        model=f"{started.client} {started.client_version}".strip(), started=envelopes[0].at,
        rounds=sum(isinstance(e.event, ToolCalled) for e in envelopes),
        stop=ended.cause if ended else "cut", images_sent=len(sent), events=len(envelopes))


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
