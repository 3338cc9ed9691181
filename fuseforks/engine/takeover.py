"""A turn that continues a record: where it is (or was) taken over, and the record it re-drives.

Durable execution, as a workflow engine does it: the engine is deterministic given its inputs, so
a turn whose process died is run again from its start with the recorded results fed back
(`fuseforks.engine.resume`), and the events it emits are checked against the record instead of
being written again (`Recorder`). Where the record ends the turn is taken over: `Turn` records
`TurnTakenOver` there and goes on live. Replay re-drives a taken-over turn the same way, taking
it over at the same seq with the recorded worker and endpoint. `Continuation` is that one idea —
the takeover points and the recorded prefix — handed to `Turn` as one object.

What cannot be recovered is said, not hidden. The record of a dead process always ends at a
write-ahead commit, so a takeover meets one of two points:
- after a `RequestSent` without an answer: the tool images the dead process held are taken off
  the message list (`images_lost`; each result then says so in the village language) and the
  request is sent again;
- after a round's `ToolCalled` events without results: the calls are not run again (a tool can
  have effects; whether it ran is unknown), each gets a result saying it was lost
  (`calls_lost`).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from fuseforks.core.errors import PrefixDiverged
from fuseforks.engine.arrivals import recorded_arrivals
from fuseforks.engine.recorder import Publish
from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import elide_base64
from fuseforks.events.sequencer import Clock, Sequencer, SystemClock
from fuseforks.events.types import RoundStarted, TurnEnded, TurnStarted, TurnTakenOver


class Takeover(msgspec.Struct, frozen=True, kw_only=True):
    """Where a turn is taken over: after the event with seq `after_seq` (the end of the record a
    dead process left), by `worker`, which sends to `endpoint_host` from then on, from the
    worker `taken_from` (as the record names it)."""

    after_seq: int
    worker: str
    endpoint_host: str
    taken_from: str = ""


class Continuation(msgspec.Struct, frozen=True, kw_only=True):
    """What a re-driven turn continues: every point where it is taken over, and the recorded
    envelopes that stand in for the events it emits until the record ends (checked one by one,
    never published again; none in replay, which compares afterwards)."""

    takeovers: tuple[Takeover, ...] = ()
    prefix: tuple[Envelope, ...] = ()
    arrivals: dict[int, tuple[str, ...]] = {}
    """Per round, the order its tool results were recorded in (the order the tools finished):
    the re-driven turn records them in the same order."""

    @classmethod
    def replayed(cls, recorded: Sequence[Envelope]) -> Continuation:
        """Re-driving a record to compare: its takeovers where they happened."""
        return cls(takeovers=tuple(_recorded_takeovers(recorded)),
                   arrivals=recorded_arrivals(recorded))

    @classmethod
    def taken_over(cls, recorded: Sequence[Envelope], *, worker: str,
                   endpoint_host: str) -> Continuation:
        """Taking over a record that has no end: its takeovers, then this one where it stops."""
        here = Takeover(after_seq=recorded[-1].seq, worker=worker, endpoint_host=endpoint_host,
                        taken_from=last_worker(recorded))
        return cls(takeovers=(*_recorded_takeovers(recorded), here), prefix=tuple(recorded),
                   arrivals=recorded_arrivals(recorded))


def _recorded_takeovers(recorded: Sequence[Envelope]) -> list[Takeover]:
    return [Takeover(after_seq=e.seq - 1, worker=e.event.worker,
                     endpoint_host=e.event.endpoint_host, taken_from=e.event.taken_from)
            for e in recorded if isinstance(e.event, TurnTakenOver)]


def last_worker(recorded: Sequence[Envelope]) -> str:
    """The worker a record says ran the turn last: the one that took it over last, else the one
    that started it ("" when the record does not say)."""
    for envelope in reversed(recorded):
        event = envelope.event
        if isinstance(event, TurnTakenOver):
            return event.worker
        if isinstance(event, TurnStarted):
            return event.worker
    return ""


class Takeovers:
    """The takeover points a running turn has yet to meet."""

    def __init__(self, turn_id: str, continuation: Continuation) -> None:
        self.turn_id = turn_id
        self._points = {t.after_seq: t for t in continuation.takeovers}

    def here(self, seq: int) -> bool:
        """The turn is taken over right after the event `seq` (the record ends there)."""
        return seq in self._points

    def take(self, seq: int) -> Takeover:
        return self._points.pop(seq)

    def none_missed(self, seq: int) -> None:
        """Before a side effect: no takeover is left behind (a record that ends where the engine
        cannot take over must not quietly go live)."""
        missed = [point for point in self._points if point <= seq]
        if missed:
            raise PrefixDiverged(f"turn {self.turn_id} cannot be taken over: its record ends at "
                                 f"seq {missed[0]}, where today's engine does not wait on a "
                                 "side effect")


async def record_abandoned(recorded: Sequence[Envelope], reason: str, publish: Publish,
                           clock: Clock | None = None) -> list[Envelope]:
    """End a turn whose record today's engine cannot continue (`PrefixDiverged`): `TurnEnded`
    with `stop="error"` and the reason, after the record's last event, so that the turn has an
    end and no one waits on it for ever. Its rounds are the rounds the record started."""
    rounds = max((e.event.round for e in recorded if isinstance(e.event, RoundStarted)), default=0)
    batch = Sequencer(recorded[-1].turn_id, clock or SystemClock(), last_seq=recorded[-1].seq).seal(
        [TurnEnded(rounds=rounds, stop="error", error=elide_base64(reason))])
    await publish(batch)
    return batch
