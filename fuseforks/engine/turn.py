"""The turn loop: ask the model, run its tool calls, record, repeat — deciding only from state.

Each step emits events; the events fold into `TurnState`; the next step reads that state. Nothing
else is remembered between steps, so a recorded stream re-driven through the same ports produces
the same events (replay). The rules of the turn live here:

- tool images go where the turn's placement puts them: inside the tool result (native), or in a
  user-role message right after the run of results, captioned as a tool's output in the village
  language (alternate); a turn starts with the placement recorded on `TurnStarted` (the one its
  agent knows works for the model);
- at the end of each round at most `image_cap` tool images stay on the message list, newest kept;
- a request whose tool images are refused (the images, or where they sit, or a 400/413/422 that
  names nothing) climbs the placement ladder: unless the images themselves were refused, they
  first move from the native to the alternate placement (`PlacementChanged`) and the request is
  sent again; refused there too, every tool image is stripped (`ImagesStripped`) and the request
  is resent once without them, and for the rest of the turn new tool images are not attached.
  What a placement did is recorded (`PlacementLearned`). The closing summary call goes through
  the same path;
- the same (tool, arguments, body, image digests) a third time stops the loop;
- image bytes live in the turn's vault and are released when the turn ends, whatever happens;
- any base64 run in text that would be recorded (a model's answer or tool arguments, a tool's text
  block, a provider's error message) is replaced by a short marker first: the record never holds
  image data, and a turn never fails because someone put base64 where text belongs.

Write-ahead: the events that lead to a side effect are committed before it starts — the batch
ending in `RequestSent` before the provider call, the batch ending in the round's `ToolCalled`
events before the MCP calls — so a record never lacks a request that left the process, whatever
happens to the process next. Events between two side effects form one batch (one transaction).
A commit is shielded from cancellation: an interruption lands only while the turn waits on the
provider or on the tools, which is what `TurnInterrupted.during` records.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import anyio
import msgspec

from fuseforks.core.canonical import ChatRequest, ChatResponse, ToolCall, has_images
from fuseforks.core.errors import HandedBack, WireError, WireRejected
from fuseforks.core.names import (
    DEFAULT_IMAGE_CAP,
    DEFAULT_MAX_ROUNDS,
    REPEAT_LIMIT,
    InFlight,
    InterruptCause,
    Language,
    LearnedOutcome,
    Placement,
    RequestPurpose,
    StopReason,
    parse_language,
)
from fuseforks.core.texts import texts
from fuseforks.engine.arrivals import Arrivals
from fuseforks.engine.outputs import output_events, recorded_arguments
from fuseforks.engine.recorder import Publish, Recorder
from fuseforks.engine.takeover import Continuation, Takeovers
from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import elide_base64
from fuseforks.events.sequencer import Clock, SystemClock
from fuseforks.events.types import (
    Exchange,
    FallbackSettled,
    ImagesCapped,
    ImagesStripped,
    PlacementChanged,
    PlacementLearned,
    RepeatDetected,
    RequestRefused,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ServerDown,
    ToolCalled,
    ToolCallRecord,
    ToolResultRecorded,
    TurnEnded,
    TurnInterrupted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.images.vault import ImageVault
from fuseforks.ports.model import ModelPort, OnText, text_listener
from fuseforks.ports.tools import ToolOutput, ToolPort, fault_output
from fuseforks.projections.messages import carried_images, chat_request
from fuseforks.projections.turn_state import ToolEntry, TurnState, plan_cap

SIGNATURE_PIECE = 76


def new_turn_id() -> str:
    """A turn id no other turn has."""
    return f"turn-{uuid.uuid4().hex}"


class TurnSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What the user asked, of which agent, in which village language."""

    agent: str
    request: str
    language: Language = "en"
    system: str = ""
    max_rounds: int = DEFAULT_MAX_ROUNDS
    image_cap: int = DEFAULT_IMAGE_CAP
    summary_instruction: str | None = None
    """None: the village language's own sentence (replay passes the recorded one)."""
    conversation_id: str = ""
    history: list[Exchange] = msgspec.field(default_factory=list)
    history_dropped: int = 0
    servers_down: list[ServerDown] = msgspec.field(default_factory=list)
    placement: Placement | None = None
    """Where the turn starts placing tool images; None: the wire's own placement. An agent
    starts with the placement its record says works for this model."""
    learns_placements: bool = True
    worker: str = ""
    """The worker process running the turn, recorded on its start."""




class TurnOutcome(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    answer: str
    stop: StopReason
    rounds: int
    error: str
    history: list[Envelope]

    @property
    def state(self) -> TurnState:
        from fuseforks.projections.fold import fold
        from fuseforks.projections.turn_state import evolve_turn

        return fold(evolve_turn, TurnState(), self.history)


def _blames_images(error: WireRejected) -> bool:
    """The refusal is about the tool images, or unexplained (a 400, 413 or 422 that names nothing)
    for a request that carries them."""
    return error.refusal in ("image", "placement") or (
        error.refusal == "other" and error.status in (400, 413, 422))


class _Failed(msgspec.Struct, frozen=True):
    error: str


def call_record(call: ToolCall) -> ToolCallRecord:
    signature = call.signature or ""
    return ToolCallRecord(
        call_id=call.id, name=call.name,
        arguments=recorded_arguments(call.arguments),
        signature=[signature[i : i + SIGNATURE_PIECE]
                   for i in range(0, len(signature), SIGNATURE_PIECE)],
    )


class Turn:
    """One turn of one agent. `run()` once; `interrupt()` from anywhere stops it with a record."""

    def __init__(
        self,
        spec: TurnSpec,
        model: ModelPort,
        tools: ToolPort,
        *,
        turn_id: str | None = None,
        clock: Clock | None = None,
        publish: Publish | None = None,
        continuing: Continuation | None = None,
        on_text: OnText | None = None,
    ) -> None:
        parse_language(spec.language)  # an unknown language fails before anything is recorded
        self._on_text = on_text  # hears each model call's text as it arrives: progress, not facts
        self.spec = spec
        self.model = model
        self.tools = tools
        self.turn_id = turn_id or new_turn_id()
        continuing = continuing or Continuation()
        self.recorder = Recorder(self.turn_id, clock or SystemClock(), publish, continuing.prefix)
        self._takeovers = Takeovers(self.turn_id, continuing)
        self._recorded_arrivals = continuing.arrivals
        self._arrivals = Arrivals()
        self._endpoint_host = model.endpoint_host
        """Where requests go; a takeover changes it (the new process has its own endpoint)."""
        self.vault = ImageVault()
        self._scope = anyio.CancelScope()
        self._cause: InterruptCause | None = None
        self._handed_back = False
        self._in_flight: InFlight = "request"

    def interrupt(self, cause: InterruptCause = "cancelled") -> None:
        """Stop the turn where it waits; it ends with `TurnInterrupted` and `stop="interrupted"`.

        Safe to call from a signal handler's task or before `run()` starts; the first cause wins."""
        if self._cause is None:
            self._cause = cause
        self._scope.cancel()

    def hand_back(self) -> None:
        """Stop the turn where it waits *without* recording an end: `run()` raises `HandedBack`.
        The record stays as write-ahead left it, so another process can take the turn over
        (a worker shutting down hands its running turns back to the queue)."""
        self._handed_back = True
        self._scope.cancel()

    @property
    def state(self) -> TurnState:
        return self.recorder.state

    @property
    def limits(self) -> TurnStarted:
        """The recorded start: the limits the engine decides by are the ones in the record."""
        assert self.state.started is not None
        return self.state.started

    async def run(self) -> TurnOutcome:
        """Run the turn to its end. Raises `RecordingFailed` when the record could not be written
        (nothing is claimed then); re-raises the caller's cancellation after recording it."""
        rec = self.recorder
        try:
            rec.emit(TurnStarted(
                agent=self.spec.agent, wire=self.model.wire, model=self.model.model,
                endpoint_host=self._endpoint_host, language=self.spec.language,
                request=elide_base64(self.spec.request), system=elide_base64(self.spec.system),
                tools=list(self.tools.tool_specs()), max_rounds=self.spec.max_rounds,
                image_cap=self.spec.image_cap,
                placement=self.spec.placement or self.model.placement,
                learns_placements=self.spec.learns_placements,
                summary_instruction=self.spec.summary_instruction
                if self.spec.summary_instruction is not None
                else texts(self.spec.language).summary_request(),
                conversation_id=self.spec.conversation_id,
                history=[msgspec.structs.replace(h, request=elide_base64(h.request),
                                                 answer=elide_base64(h.answer))
                         for h in self.spec.history],
                history_dropped=self.spec.history_dropped,
                servers_down=[msgspec.structs.replace(d, reason=elide_base64(d.reason))
                              for d in self.spec.servers_down],
                worker=self.spec.worker,
            ))
            outcome: tuple[StopReason, str, str, int] | None = None
            try:
                with self._scope:
                    outcome = await self._loop()
            except anyio.get_cancelled_exc_class():
                # The caller's own cancellation (not `interrupt()`): record it, then pass it on
                # (unless the turn is being handed back: then nothing more is recorded).
                if not self._handed_back:
                    await self._record_interruption("cancelled")
                raise
            if outcome is None and self._handed_back:
                raise HandedBack(f"turn {self.turn_id} was handed back after seq {rec.seq}")
            if outcome is None:  # `interrupt()` cancelled our scope
                await self._record_interruption(self._cause or "cancelled")
                stop: StopReason = "interrupted"
                answer, error, rounds = "", "", self.state.round
            else:
                stop, answer, error, rounds = outcome
                answer, error = elide_base64(answer), elide_base64(error)
                rec.emit(TurnEnded(rounds=rounds, stop=stop, answer=answer, error=error))
                await rec.commit()
        finally:
            self.vault.release()
        return TurnOutcome(turn_id=self.turn_id, answer=answer, stop=stop, rounds=rounds,
                          error=error, history=list(rec.history))

    async def _record_interruption(self, cause: InterruptCause) -> None:
        rec = self.recorder
        rec.emit(TurnInterrupted(round=self.state.round, cause=cause, during=self._in_flight))
        rec.emit(TurnEnded(rounds=self.state.round, stop="interrupted"))
        await rec.commit()

    async def _loop(self) -> tuple[StopReason, str, str, int]:
        rec = self.recorder
        round_ = 0
        while True:
            round_ += 1
            rec.emit(RoundStarted(round=round_))
            outcome = await self._ask("round")
            if isinstance(outcome, _Failed):
                return "error", "", outcome.error, round_
            if not outcome.tool_calls:
                return "answered", outcome.text, "", round_
            await self._run_tools(outcome.tool_calls)
            stop: StopReason | None = None
            if self.state.repeat_hit is not None:
                rec.emit(RepeatDetected(round=round_, name=self.state.repeat_hit, count=REPEAT_LIMIT))
                stop = "repeat"
            self._cap(round_)
            if stop is None and round_ >= self.limits.max_rounds:
                stop = "tool_limit"
            if stop is not None:
                summary = await self._ask("summary")
                if isinstance(summary, _Failed):
                    return stop, "", summary.error, round_
                return stop, summary.text, "", round_

    # --- asking the model, with the one-time image fallback -------------------------------------

    async def _ask(self, purpose: RequestPurpose) -> ChatResponse | _Failed:
        """One model call, with the ladder for a refusal of the tool images it carries: first the
        images move to a user-role message after the tool results (once, from the native
        placement), then they are stripped and the request is resent once. A refusal of the
        images themselves (the provider could not read them) skips the first step: moving them
        would not help. A refusal of a parameter, the model or the request's shape is an ordinary
        error: the images are not blamed."""
        summary = purpose == "summary"
        carried = carried_images(self.state)
        try:
            return await self._send(purpose, summary)
        except WireRejected as error:
            self._record_rejection(purpose, error)
            if not carried or not _blames_images(error):
                return _Failed(str(error))
            refused = error
        except WireError as error:
            return _Failed(str(error))
        if refused.refusal != "image" and self.state.placement == "native":
            self._learn("refused")
            self.recorder.emit(PlacementChanged(round=self.state.round, model=self.model.model,
                                                placement="alternate"))
            try:
                return await self._send("resend", summary)
            except WireRejected as error:
                self._record_rejection("resend", error)
                if not _blames_images(error):
                    return _Failed(str(error))
                if error.refusal != "image":
                    self._learn("refused")
            except WireError as error:
                return _Failed(str(error))
        return await self._strip_and_resend(summary)

    async def _strip_and_resend(self, summary: bool) -> ChatResponse | _Failed:
        rec = self.recorder
        carried = carried_images(self.state)
        rec.emit(ImagesStripped(
            round=self.state.round, model=self.model.model, removed=len(carried),
            digests=[d.digest for d in carried],
            call_ids=list(dict.fromkeys(d.call_id for d in carried)),
        ))
        try:
            response = await self._send("resend", summary)
        except WireError as second:
            if isinstance(second, WireRejected):
                self._record_rejection("resend", second)
            rec.emit(FallbackSettled(round=self.state.round, model=self.model.model,
                                     removed=len(carried), outcome="failed"))
            return _Failed(str(second))
        rec.emit(FallbackSettled(round=self.state.round, model=self.model.model,
                                 removed=len(carried), outcome="ok"))
        return response

    def _learn(self, outcome: LearnedOutcome) -> None:
        """Record, once per turn, what the current placement did for this model."""
        placement = self.state.placement
        if not self.limits.learns_placements or (placement, outcome) in self.state.learned:
            return
        self.recorder.emit(PlacementLearned(
            round=self.state.round, wire=self.model.wire, model=self.model.model,
            endpoint_host=self._endpoint_host, placement=placement, outcome=outcome))

    async def _send(self, purpose: RequestPurpose, summary: bool) -> ChatResponse:
        rec = self.recorder
        request = self._request_sent(purpose, summary)
        while self._takeovers.here(self.recorder.seq):
            # The record ends with this request, unanswered: the answer was lost with the process
            # that sent it. Without the images that process held, it is sent again (and again,
            # if the process that sent it again died too).
            self._take_over([])
            request = self._request_sent(purpose, summary)
        self._takeovers.none_missed(self.recorder.seq)
        await rec.commit()  # write-ahead: the request is on record before it leaves
        self._in_flight = "request"
        response = await self.model.chat(request, self.vault, rec, on_text=text_listener(
            self._on_text, self.state.round, purpose))
        rec.emit(ResponseReceived(
            round=self.state.round, text=elide_base64(response.text),
            tool_calls=[call_record(c) for c in response.tool_calls],
            usage=response.usage,
            stop_reason=response.stop_reason,
        ))
        if has_images(request):
            self._learn("received")
        return response

    def _request_sent(self, purpose: RequestPurpose, summary: bool) -> ChatRequest:
        request = chat_request(self.state, summary=summary)
        self.recorder.emit(RequestSent(
            round=self.state.round, purpose=purpose, wire=self.model.wire, model=self.model.model,
            endpoint_host=self._endpoint_host, message_count=len(request.messages),
            images=carried_images(self.state), summary=summary,
        ))
        return request

    # --- taking over a turn whose process died --------------------------------------------------

    def _take_over(self, calls: Sequence[ToolCall]) -> None:
        takeover = self._takeovers.take(self.recorder.seq)
        self._endpoint_host = takeover.endpoint_host
        self.recorder.emit(TurnTakenOver(
            round=self.state.round, worker=takeover.worker, endpoint_host=takeover.endpoint_host,
            images_lost=list(dict.fromkeys(d for _, d in self.state.attached_images)),
            calls_lost=[c.id for c in calls], taken_from=takeover.taken_from))

    def _record_rejection(self, purpose: RequestPurpose, error: WireRejected) -> None:
        self.recorder.emit(RequestRefused(
            round=self.state.round, purpose=purpose, status=error.status or 400,
            error_type=error.error_type, code=error.code,
            message=elide_base64(error.message)[:500], images_rejected=error.images_rejected,
            refusal=error.refusal,
        ))

    # --- running the round's tool calls ---------------------------------------------------------

    async def _run_tools(self, calls: Sequence[ToolCall]) -> None:
        rec = self.recorder
        round_ = self.state.round
        for call in calls:
            record = call_record(call)
            rec.emit(ToolCalled(round=round_, call_id=call.id, server=self.tools.server_of(call.name),
                                name=call.name, arguments=record.arguments))
        if self._takeovers.here(self.recorder.seq):
            # The record ends with these calls started: they may or may not have run. A tool can
            # have effects, so they are not run again; each result says it was lost.
            self._take_over(calls)
            lost = texts(self.spec.language).lost_result()
            for call in calls:
                rec.emit(ToolResultRecorded(round=round_, call_id=call.id, name=call.name,
                                            ok=False, body=lost, fault="lost in takeover"))
            return
        self._takeovers.none_missed(self.recorder.seq)
        await rec.commit()  # write-ahead: the calls are on record before any starts
        self._in_flight = "tools"
        arrivals = self._arrivals = Arrivals(self._recorded_arrivals.get(round_))

        async def run_one(call: ToolCall) -> None:
            try:
                output = await self.tools.call(call.name, call.arguments, self.spec.language)
            except Exception as error:
                output = fault_output(f"{type(error).__name__}: {error}", self.spec.language)
            await arrivals.turn_of(call.id)
            self._record_output(round_, call, output)  # as it arrives: its time is its own
            arrivals.recorded(call.id)

        async with anyio.create_task_group() as group:
            for call in calls:
                group.start_soon(run_one, call)

    async def results_settled(self) -> None:
        """Return once the round's recorded results are recorded again (a re-driven turn that
        was interrupted during its tools stops after them, as the recording did)."""
        await self._arrivals.settled.wait()

    def _record_output(self, round_: int, call: ToolCall, output: ToolOutput) -> None:
        attach = bool(output.images) and not self.state.fallback_active
        if attach:
            for image in output.images:
                self.vault.hold(image.digest, image.data, image.media_type)
        for event in output_events(round_, call.id, call.name, output, attached=attach):
            self.recorder.emit(event)

    def _cap(self, round_: int) -> None:
        cuts = plan_cap(self.state, self.limits.image_cap)
        if not cuts:
            return
        images = {e.call_id: e.images for e in self.state.entries if isinstance(e, ToolEntry)}
        removed = [d for cut in cuts for d in images[cut.call_id][cut.keep:]]
        kept = len(self.state.attached_images) - len(removed)
        self.recorder.emit(ImagesCapped(
            round=round_, removed=len(removed), kept=kept, removed_digests=removed, cuts=cuts,
        ))
