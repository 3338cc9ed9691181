"""What `Agent.run` returns: the answer and the facts a caller acts on, folded from the record."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from fuseforks.core.canonical import Usage
from fuseforks.core.media import format_name
from fuseforks.core.names import Placement, StopReason
from fuseforks.engine.turn import TurnOutcome
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ImageMeta, ImagesNormalized, ResponseReceived, TurnEnded
from fuseforks.projections.deliveries import delivered, deliveries


class SentImage(msgspec.Struct, frozen=True, kw_only=True):
    """A tool image this turn sent to the provider (never its bytes)."""

    digest: str
    format: str
    size: int
    width: int
    height: int
    placement: Placement
    """Where it was delivered: in the last answered request that carried it, or, when none
    was answered, in the last request that carried it (`fuseforks.projections.deliveries`)."""
    tool: str
    received: bool
    """A request carrying it was answered (not refused, not cut short)."""


class TurnResult(msgspec.Struct, frozen=True, kw_only=True):
    answer: str
    turn_id: str
    conversation_id: str
    stop: StopReason
    rounds: int
    error: str
    usage: Usage
    """Token totals over every request of the turn."""
    images: list[SentImage]
    events: list[Envelope]
    """The turn's record, as stored."""

    @property
    def ok(self) -> bool:
        return not self.error and self.stop != "interrupted"


def not_started_result(recorded: Sequence[Envelope], conversation_id: str) -> TurnResult:
    """The result of a turn recorded as not started: its end's reason, nothing sent."""
    ended = recorded[-1].event
    assert isinstance(ended, TurnEnded)
    return TurnResult(answer="", turn_id=recorded[0].turn_id, conversation_id=conversation_id,
                      stop=ended.stop, rounds=0, error=ended.error, usage=Usage(), images=[],
                      events=list(recorded))


def turn_result(outcome: TurnOutcome, conversation_id: str) -> TurnResult:
    metas: dict[str, ImageMeta] = {}
    usage = Usage()
    for envelope in outcome.history:
        event = envelope.event
        if isinstance(event, ImagesNormalized):
            metas.update((m.digest, m) for m in event.images)
        elif isinstance(event, ResponseReceived):
            u = event.usage
            usage = Usage(input_tokens=usage.input_tokens + u.input_tokens,
                          output_tokens=usage.output_tokens + u.output_tokens,
                          cache_read_tokens=usage.cache_read_tokens + u.cache_read_tokens,
                          cache_write_tokens=usage.cache_write_tokens + u.cache_write_tokens)
    images = [
        SentImage(digest=row.digest, format=format_name(meta.media_type), size=meta.size,
                  width=meta.width, height=meta.height, placement=row.placement, tool=row.tool,
                  received=row.outcome == "received")
        for row in delivered(deliveries(outcome.history))
        for meta in (metas[row.digest],)
    ]
    return TurnResult(answer=outcome.answer, turn_id=outcome.turn_id,
                      conversation_id=conversation_id, stop=outcome.stop, rounds=outcome.rounds,
                      error=outcome.error, usage=usage, images=images, events=outcome.history)
