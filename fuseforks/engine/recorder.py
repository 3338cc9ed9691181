"""Where the engine's decisions become history: emit an event, fold it, seal it, commit a batch.

Emitting folds the event into the turn state at once, so the engine's next decision always sees it.
Committing hands the envelopes emitted since the last commit to `publish` as one batch and returns
only when the record holds them (the store writes a batch as one transaction): the engine commits
before every side effect. A commit cannot be cancelled half-way.

A recorder can start with a recorded prefix (a turn taken over from a process that died): the
events the re-driven engine emits are then checked against the prefix, one by one, and the recorded
envelopes (their times included) stand in for them. They are already in the store, so they are
never published again; the first event past the prefix is the first one committed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Sequence

import anyio

from fuseforks.core.errors import PrefixDiverged
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import Clock, Sealed, Sequencer
from fuseforks.events.types import JpegResent, LlmRetried, LlmRetryStopped, TurnEvent
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop
from fuseforks.projections.turn_state import TurnState, evolve_turn

Publish = Callable[[Sequence[Envelope]], Awaitable[None]]


class Ledger:
    """Seals events into a record's envelopes (seq, time) and commits them in batches, in order.

    What a turn's `Recorder` and a gateway `Session` share. Commits are taken one at a time, so
    when several tasks of one record commit (the concurrent calls of a gateway session), each
    batch reaches `publish` whole and after the one before it."""

    def __init__(self, turn_id: str, clock: Clock, publish: Publish | None = None) -> None:
        self.turn_id = turn_id
        self.history: list[Envelope] = []
        self._sequencer = Sequencer(turn_id, clock)
        self._publish = publish
        self._unpublished = 0
        self._bodies: list[bytes | None] = []
        """The vetted bodies of the envelopes not yet published (see `Sealed`)."""
        self._committing = anyio.Lock(fast_acquire=True)

    @property
    def seq(self) -> int:
        """The seq of the last event emitted (0 before the first)."""
        return len(self.history)

    def append(self, event: TurnEvent) -> Envelope:
        """Seal `event` as the record's next envelope, to be published by the next commit."""
        sealed = self._sequencer.seal([event])
        self.history += sealed
        self._bodies += sealed.bodies
        self._unpublished += 1
        return sealed[0]

    async def commit(self) -> None:
        """Make every emitted event durable; raises `RecordingFailed` if the record refused it.
        Shielded whole, the wait for an earlier commit included: a cancelled task still records
        what it emitted."""
        with anyio.CancelScope(shield=True):
            async with self._committing:
                if not self._unpublished:
                    return
                batch = Sealed(self.history[-self._unpublished :], self._bodies)
                self._unpublished, self._bodies = 0, []
                if self._publish is not None:
                    await self._publish(batch)


class Recorder(Ledger):
    """A turn's ledger: each event folds into `TurnState` as it is emitted."""

    def __init__(self, turn_id: str, clock: Clock, publish: Publish | None = None,
                 prefix: Sequence[Envelope] = ()) -> None:
        super().__init__(turn_id, clock, publish)
        self.state = TurnState()
        self._prefix = deque(prefix)

    @property
    def in_prefix(self) -> bool:
        """Recorded events remain to be re-driven."""
        return bool(self._prefix)

    def emit(self, event: TurnEvent) -> None:
        if self._prefix:
            (envelope,) = self._sequencer.seal([event])
            recorded = self._prefix.popleft()
            if recorded.event != event:
                raise PrefixDiverged(
                    f"turn {self.turn_id} cannot be taken over: at seq {envelope.seq} the record "
                    f"has {type(recorded.event).__name__}, today's engine "
                    f"{type(event).__name__}")
            self.state = evolve_turn(self.state, event)
            self.history.append(recorded)
            return
        self.state = evolve_turn(self.state, event)
        self.append(event)

    # --- ModelNotes: what the provider client reports mid-call ----------------------------------

    def retried(self, notice: RetryNotice) -> None:
        self.emit(LlmRetried(round=self.state.round, attempt=notice.attempt, status=notice.status,
                             error_class=notice.error_class, code=notice.code,
                             delay_ms=round(notice.delay * 1000)))

    def stopped(self, stop: RetryStop) -> None:
        self.emit(LlmRetryStopped(round=self.state.round, attempt=stop.attempts, status=stop.status,
                                  error_class=stop.error_class, code=stop.code))

    def jpeg_resend(self, notice: JpegResendNotice) -> None:
        self.emit(JpegResent(round=self.state.round, model=notice.model,
                             converted=notice.converted))
