"""Replay: re-drive today's engine with a turn's recorded results and name the first divergence.

Like a workflow engine's non-determinism check: the provider calls, the MCP calls and image
normalization are the turn's "activities". Their results are in the stream, so the engine runs
again with those results fed back — nothing goes to the network, no MCP server starts, no image is
decoded — and the events it emits are compared with the recorded ones, position by position.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any, NoReturn

import anyio
import msgspec

from fuseforks.core.canonical import ChatRequest, ChatResponse, ToolCall
from fuseforks.core.errors import WireError, WireRejected
from fuseforks.core.names import InFlight, Language, WireName
from fuseforks.engine.not_started import redrive_not_started
from fuseforks.engine.outputs import recorded_output
from fuseforks.engine.session_replay import redrive_session
from fuseforks.engine.takeover import Continuation
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock
from fuseforks.events.types import (
    ImagesDropped,
    ImagesNormalized,
    JpegResent,
    LlmRetried,
    LlmRetryStopped,
    RequestRefused,
    RequestSent,
    ResourceRead,
    ResponseReceived,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    ToolSpecRecord,
    TurnEnded,
    TurnEvent,
    TurnInterrupted,
    TurnNotStarted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.images.vault import ImageVault
from fuseforks.ports.model import ModelNotes, TextListener
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop
from fuseforks.ports.tools import LinkRead, ToolOutput

_canonical = msgspec.json.Encoder(order="sorted")
_arguments = msgspec.json.Decoder(dict[str, Any])


class ReplayExhausted(WireError):
    """The engine asked the model more often than the recording did."""


class _ReplayedRejection(WireRejected):
    """A recorded refusal; its text is the one the recorded turn ended with."""

    def __init__(self, text: str, **fields: Any) -> None:
        self._text = text
        super().__init__(**fields)

    def __str__(self) -> str:
        return self._text or super().__str__()


class _ReplayedFailure(WireError):
    def __init__(self, text: str, wire: WireName) -> None:
        self._text = text
        super().__init__(wire=wire, status=None, error_class="replayed")

    def __str__(self) -> str:
        return self._text


class RecordedCall(msgspec.Struct, frozen=True):
    """One recorded model call: the notices heard during it and how it ended. (Not a
    conversation's `Exchange`, which is an earlier turn's request and answer.)"""

    notices: list[TurnEvent]
    outcome: ResponseReceived | RequestRefused | None


def recorded_calls(events: Sequence[TurnEvent]) -> list[RecordedCall]:
    found: list[RecordedCall] = []
    current: list[TurnEvent] | None = None
    for event in events:
        if isinstance(event, RequestSent):
            if current is not None:
                found.append(RecordedCall(current, None))
            current = []
        elif current is not None and isinstance(event, LlmRetried | LlmRetryStopped |
                                                JpegResent):
            current.append(event)
        elif current is not None and isinstance(event, ResponseReceived | RequestRefused):
            found.append(RecordedCall(current, event))
            current = None
        elif isinstance(event, TurnTakenOver):
            current = None  # its answer was lost with the process; the request is sent again
    if current is not None:
        found.append(RecordedCall(current, None))
    return found


class _Interruption:
    """A recorded interruption, re-enacted: when the re-driven turn reaches the side effect the
    recording stopped in, it is interrupted there with the recorded cause."""

    def __init__(self, events: Sequence[TurnEvent]) -> None:
        self.recorded = next((e for e in events if isinstance(e, TurnInterrupted)), None)
        self.turn: Turn | None = None

    def during(self, step: InFlight) -> bool:
        return self.recorded is not None and self.recorded.during == step

    async def enact(self) -> NoReturn:
        assert self.recorded is not None and self.turn is not None
        if self.recorded.during == "tools":
            await self.turn.results_settled()
        self.turn.interrupt(self.recorded.cause)
        await anyio.sleep_forever()
        raise AssertionError("an interrupted turn does not go on")


class ReplayModel:
    def __init__(self, started: TurnStarted, events: Sequence[TurnEvent],
                 interruption: _Interruption | None = None) -> None:
        self.wire = started.wire
        self.model = started.model
        self.endpoint_host = started.endpoint_host
        self.placement = started.placement
        self._queue = deque(recorded_calls(events))
        if not any(isinstance(e, TurnEnded) for e in events):
            while self._queue and self._queue[-1].outcome is None:
                self._queue.pop()  # a record cut by a dying process: that answer was never heard
        ended = next((e for e in events if isinstance(e, TurnEnded)), None)
        self._error_text = ended.error if ended is not None else ""
        self._interruption = interruption or _Interruption(events)

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes, *,
                   on_text: TextListener | None = None) -> ChatResponse:
        """The next recorded call; a listener hears the recorded answer's text in one piece,
        as the attempt the recording ended on (deltas were never recorded)."""
        if not self._queue:
            raise ReplayExhausted(wire=self.wire, status=None, error_class="replay",
                                  message="the recording has no further model response")
        call = self._queue.popleft()
        for notice in call.notices:
            self._tell(notice, notes)
        outcome = call.outcome
        if outcome is None and not self._queue and self._interruption.during("request"):
            await self._interruption.enact()
        if isinstance(outcome, ResponseReceived):
            if on_text is not None and outcome.text:
                resent = sum(isinstance(n, LlmRetried | JpegResent) for n in call.notices)
                on_text(outcome.text, 1 + resent)
            return ChatResponse(
                text=outcome.text,
                tool_calls=[
                    ToolCall(id=c.call_id, name=c.name, arguments=_arguments.decode(c.arguments),
                             signature="".join(c.signature) or None)
                    for c in outcome.tool_calls
                ],
                usage=outcome.usage,
                stop_reason=outcome.stop_reason, raw_model=self.model,
            )
        if isinstance(outcome, RequestRefused):
            raise _ReplayedRejection(
                self._error_text, refusal=outcome.refusal, wire=self.wire,
                status=outcome.status, error_class="client_error", error_type=outcome.error_type,
                code=outcome.code, message=outcome.message,
            )
        raise _ReplayedFailure(self._error_text, self.wire)

    @property
    def remaining(self) -> int:
        """Recorded model calls not yet served."""
        return len(self._queue)

    def _tell(self, notice: TurnEvent, notes: ModelNotes) -> None:
        wire, model, host = self.wire, self.model, self.endpoint_host
        if isinstance(notice, LlmRetried):
            notes.retried(RetryNotice(wire=wire, model=model, host=host, attempt=notice.attempt,
                                      max_attempts=0,
                                      status=notice.status, error_class=notice.error_class,
                                      code=notice.code, delay=notice.delay_ms / 1000))
        elif isinstance(notice, LlmRetryStopped):
            notes.stopped(RetryStop(wire=wire, model=model, host=host, attempts=notice.attempt, status=notice.status,
                                    error_class=notice.error_class, code=notice.code,
                                    images_rejected=False))
        elif isinstance(notice, JpegResent):
            notes.jpeg_resend(JpegResendNotice(wire=self.wire, model=notice.model,
                                               host=self.endpoint_host, converted=notice.converted))


class ReplayTools:
    """Recorded tool outputs, served per (tool, arguments) in the order of their calls (the
    engine starts a round's calls in call order; it records their results in the recorded
    order, `fuseforks.engine.arrivals`)."""

    def __init__(self, started: TurnStarted, events: Sequence[TurnEvent],
                 interruption: _Interruption | None = None) -> None:
        self._interruption = interruption or _Interruption(events)
        self._specs = list(started.tools)
        self._servers: dict[str, str] = {}
        calls: dict[str, ToolCalled] = {}
        normalized: dict[str, ImagesNormalized] = {}
        dropped: dict[str, ImagesDropped] = {}
        reads: dict[str, list[LinkRead]] = defaultdict(list)
        lost: set[str] = set()  # calls whose results a takeover wrote: the engine writes them again
        self._outputs: dict[tuple[str, str], deque[ToolOutput]] = defaultdict(deque)
        slots: list[tuple[tuple[str, str], list[ToolOutput]]] = []  # per call, in call order
        slot_of: dict[str, list[ToolOutput]] = {}
        for event in events:
            if isinstance(event, ToolCalled):
                calls[event.call_id] = event
                self._servers[event.name] = event.server
                slot_of[event.call_id] = []
                slots.append(((event.name, event.arguments), slot_of[event.call_id]))
            elif isinstance(event, ImagesNormalized):
                normalized[event.call_id] = event
            elif isinstance(event, ImagesDropped):
                dropped[event.call_id] = event
            elif isinstance(event, ResourceRead):
                reads[event.call_id].append(LinkRead(uri=event.uri, outcome=event.outcome,
                                                     digest=event.digest, size=event.size,
                                                     detail=event.detail))
            elif isinstance(event, TurnTakenOver):
                lost.update(event.calls_lost)
            elif isinstance(event, ToolResultRecorded) and event.call_id in lost:
                lost.discard(event.call_id)
            elif isinstance(event, ToolResultRecorded):
                output = recorded_output(event, normalized.get(event.call_id),
                                         dropped.get(event.call_id), reads.pop(event.call_id, []))
                if event.call_id in slot_of:
                    slot_of[event.call_id].append(output)
                else:
                    slots.append(((event.name, "{}"), [output]))
        for key, outputs in slots:
            self._outputs[key].extend(outputs)

    def tool_specs(self) -> list[ToolSpecRecord]:
        return self._specs

    def holds(self, name: str, arguments: dict[str, Any]) -> bool:
        """A recorded output of this call is still to be served."""
        return bool(self._outputs.get((name, _canonical.encode(arguments).decode())))

    def server_of(self, name: str) -> str:
        return self._servers.get(name, "")

    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        queue = self._outputs.get((name, _canonical.encode(arguments).decode()))
        if not queue and self._interruption.during("tools"):
            await self._interruption.enact()
        if not queue:
            return ToolOutput(text=f"replay: no recorded output for {name}", is_error=True,
                              fault="replay: no recorded output")
        return queue.popleft()


class Divergence(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    expected: TurnEvent | None
    produced: TurnEvent | None


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    recorded: int
    produced: int
    interrupted: bool
    divergence: Divergence | None

    @property
    def identical(self) -> bool:
        return self.divergence is None


def spec_of(started: TurnStarted) -> TurnSpec:
    return TurnSpec(agent=started.agent, request=started.request, language=started.language,
                    system=started.system, max_rounds=started.max_rounds,
                    image_cap=started.image_cap, summary_instruction=started.summary_instruction,
                    conversation_id=started.conversation_id, history=list(started.history),
                    history_dropped=started.history_dropped,
                    servers_down=list(started.servers_down), placement=started.placement,
                    learns_placements=started.learns_placements, worker=started.worker)


async def redrive(recorded: Sequence[Envelope]) -> list[Envelope]:
    """Run today's engine on a recorded turn's results (or today's gateway session on a recorded
    session's); return the envelopes it emits. A turn that could not start is recorded again
    from its request and reason."""
    events = [e.event for e in recorded]
    started = events[0]
    if isinstance(started, TurnNotStarted):
        return redrive_not_started(recorded, FixedClock())
    if isinstance(started, SessionStarted):
        return await redrive_session(recorded)
    if not isinstance(started, TurnStarted):
        raise ValueError(f"turn {recorded[0].turn_id} does not begin with TurnStarted")
    interruption = _Interruption(events)
    turn = Turn(spec_of(started), ReplayModel(started, events, interruption),
                ReplayTools(started, events, interruption),
                turn_id=recorded[0].turn_id, clock=FixedClock(),
                continuing=Continuation.replayed(recorded))
    interruption.turn = turn
    return (await turn.run()).history


async def verify(recorded: Sequence[Envelope]) -> Verification:
    produced = await redrive(recorded)
    interrupted = not isinstance(recorded[-1].event, TurnEnded | SessionEnded)
    divergence = None
    for index in range(max(len(recorded), len(produced))):
        expected = recorded[index].event if index < len(recorded) else None
        made = produced[index].event if index < len(produced) else None
        if interrupted and expected is None:
            break  # the re-driven engine goes on past where the recording stopped
        if expected != made:
            divergence = Divergence(seq=index + 1, expected=expected, produced=made)
            break
    return Verification(turn_id=recorded[0].turn_id, recorded=len(recorded),
                        produced=len(produced), interrupted=interrupted, divergence=divergence)


