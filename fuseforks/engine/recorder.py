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
from fuseforks.events.sequencer import Clock, Sequencer
from fuseforks.events.types import JpegResent, LlmRetried, LlmRetryStopped, TurnEvent
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop
from fuseforks.projections.turn_state import TurnState, evolve_turn

Publish = Callable[[Sequence[Envelope]], Awaitable[None]]




class Recorder:
    def __init__(self, turn_id: str, clock: Clock, publish: Publish | None = None,
                 prefix: Sequence[Envelope] = ()) -> None:
        self.turn_id = turn_id
        self.state = TurnState()
        self.history: list[Envelope] = []
        self._sequencer = Sequencer(turn_id, clock)
        self._publish = publish
        self._unpublished = 0
        self._prefix = deque(prefix)

    @property
    def seq(self) -> int:
        """The seq of the last event emitted (0 before the first)."""
        return len(self.history)

    @property
    def in_prefix(self) -> bool:
        """Recorded events remain to be re-driven."""
        return bool(self._prefix)

    def emit(self, event: TurnEvent) -> None:
        (envelope,) = self._sequencer.seal([event])
        if self._prefix:
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
        self.history.append(envelope)
        self._unpublished += 1

    async def commit(self) -> None:
        """Make every emitted event durable; raises `RecordingFailed` if the record refused it."""
        if not self._unpublished:
            return
        batch = self.history[-self._unpublished :]
        self._unpublished = 0
        if self._publish is not None:
            with anyio.CancelScope(shield=True):
                await self._publish(batch)

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
