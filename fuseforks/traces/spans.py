"""A turn's events as OpenTelemetry GenAI spans — a pure projection, no OpenTelemetry import.

The tree of one turn:

    invoke_agent {agent}          the turn: TurnStarted … TurnEnded
      chat {model}                one per request: RequestSent … ResponseReceived | RequestRefused
      execute_tool {tool}         one per tool call: ToolCalled … ToolResultRecorded
      chat {model} …

and of one gateway session (an MCP client's calls through `fuseforks gateway`):

    gateway_session {client}      SessionStarted … SessionEnded
      execute_tool {tool}         one per call: ToolCalled … ToolResultRecorded (the images the
                                  client was sent: `fuseforks.images.sent`, from ResultSent)

Every time is an event's recorded `at` and every id is derived from the turn id and the seq of the
event that opens the span, so the spans of a turn are a function of its record alone: the live
subscriber and `fuseforks export --format otlp-json` produce the same trace, to the id. The trace
id is the first 16 bytes of SHA-256("fuseforks.trace", turn id); a span id is the first 8 bytes of
SHA-256("fuseforks.span", turn id, seq).

Where a span ends: a request at its answer or refusal; a request that failed otherwise (retries
exhausted, a broken answer) at the next event that is not a notice of the HTTP edge — the turn's
end, or the fallback's `FallbackSettled`; a tool call when its result is recorded (the results of
a round are recorded in call order once every call of the round has returned). An interruption
ends what was in flight; a record without `TurnEnded` (the process died) ends every open span at
its last event, with `fuseforks.turn.stop = "cut"` (a session's: `fuseforks.session.stop`).

The placement ladder shows on the chat spans: a refusal says what it was about
(`fuseforks.refusal`: image, placement, parameter, other), the request a `PlacementLearned`
concerns carries `fuseforks.placement.learned` (`native:refused`, `alternate:received`, ...), and
the request that follows a `PlacementChanged` carries `fuseforks.placement.changed` (the placement
its tool images moved to).

The projection is a fold like every other (`evolve_spans(state, envelope) -> state` over frozen
values, then `finish`): a span is a draft in the state until the record ends. The chat spans'
tool images and the outcome of a request that was answered or refused come from the delivery
fold (`fuseforks.projections.deliveries`), as every other reader's do.

Content — the user's request, the system prompt, the model's answers, tool arguments and tool
bodies — is attached only when asked for (`capture_content`), in the conventions' JSON message
format (`fuseforks.traces.content`). Images are never content: a span names them by digest, format and size only, and there is
no pixel or base64 in any event to begin with.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    FallbackSettled,
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
    ResponseReceived,
    ResultSent,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnInterrupted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.projections.deliveries import Deliveries, evolve_deliveries
from fuseforks.projections.turn_state import TurnState, evolve_turn
from fuseforks.projections.words import call_end
from fuseforks.traces import attributes as of
from fuseforks.traces import content
from fuseforks.traces import conventions as c
from fuseforks.traces.content import capture_content
from fuseforks.traces.types import (
    Attributes,
    SpanKind,
    SpanStatus,
    TraceEvent,
    TraceSpan,
    span_id,
    time_ns,
    trace_id,
)

__all__ = ["Draft", "SpanState", "TraceEvent", "TraceSpan", "capture_content", "evolve_spans",
           "finish", "time_ns", "turn_spans"]

_replace = msgspec.structs.replace


class Draft(msgspec.Struct, frozen=True, kw_only=True):
    """A span being built; frozen into a `TraceSpan` when the fold is finished."""

    name: str
    span_id: int
    parent: int | None
    kind: SpanKind
    start_ns: int
    end_ns: int | None = None
    attributes: Attributes = {}
    events: tuple[TraceEvent, ...] = ()
    status: SpanStatus = "unset"
    description: str = ""
    error_type: str = ""

    def set(self, attributes: Attributes) -> Draft:
        return _replace(self, attributes={**self.attributes, **attributes})

    def add(self, event: TraceEvent) -> Draft:
        return _replace(self, events=(*self.events, event))

    def fail(self, description: str, error_type: str) -> Draft:
        return _replace(self, status="error", description=description, error_type=error_type,
                        attributes={**self.attributes, c.ERROR_TYPE: error_type})

    def ended(self, end_ns: int, outcome: Attributes) -> Draft:
        return _replace(self, end_ns=end_ns, attributes={**self.attributes, **outcome})

    def freeze(self, trace: int, last_ns: int) -> TraceSpan:
        return TraceSpan(
            name=self.name, trace_id=trace, span_id=self.span_id, parent_span_id=self.parent,
            kind=self.kind, start_ns=self.start_ns,
            end_ns=self.end_ns if self.end_ns is not None else last_ns,
            attributes=self.attributes, events=list(self.events), status=self.status,
            status_description=self.description)


class SpanState(msgspec.Struct, frozen=True, kw_only=True):
    """The spans of one turn so far, and what the next events need to know."""

    capture: bool = False
    """Content is attached (`capture_content`)."""
    began: bool = False
    session: bool = False
    """The record is a gateway session's (it began with `SessionStarted`)."""
    spans: tuple[Draft, ...] = ()
    """The turn's span first, the others in the order they start; none for a record that
    begins neither with `TurnStarted` nor with `SessionStarted`."""
    turn_id: str = ""
    now: int = 0
    """The time of the last event."""
    request: int | None = None
    """Index of the request in flight."""
    requests: tuple[int, ...] = ()
    tools: dict[str, int] = {}
    """Call id -> index of its tool span."""
    failed: tuple[int, ...] = ()
    """Requests that failed without a refusal: the turn's error says why."""
    last_error_type: str = ""
    moved_to: str = ""
    """A `PlacementChanged` waiting for the request that follows it."""
    answered: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    images: int = 0
    dropped: int = 0
    capped: int = 0
    deliveries: Deliveries = Deliveries()
    turn: TurnState = TurnState()
    """The turn state, folded only for content (the messages a request carried)."""

    def put(self, index: int, draft: Draft) -> SpanState:
        return _replace(self, spans=(*self.spans[:index], draft, *self.spans[index + 1:]))

    def start(self, draft: Draft) -> tuple[SpanState, int]:
        return _replace(self, spans=(*self.spans, draft)), len(self.spans)

    def on_root(self, attributes: Attributes) -> SpanState:
        return self.put(0, self.spans[0].set(attributes))

    def on_request(self, attributes: Attributes) -> SpanState:
        """The request in flight, if any, says more."""
        if self.request is None:
            return self
        return self.put(self.request, self.spans[self.request].set(attributes))

    def on_last_request(self, attributes: Attributes) -> SpanState:
        """The request an event after its outcome concerns (the last one sent)."""
        if not self.requests:
            return self
        index = self.requests[-1]
        return self.put(index, self.spans[index].set(attributes))

    def on_tool(self, call_id: str, change: Attributes | Draft) -> SpanState:
        index = self.tools.get(call_id)
        if index is None:
            return self
        draft = change if isinstance(change, Draft) else self.spans[index].set(change)
        return self.put(index, draft)

    def end_request(self, outcome: str) -> SpanState:
        assert self.request is not None
        ended = self.spans[self.request].ended(self.now, {c.REQUEST_OUTCOME: outcome})
        return _replace(self.put(self.request, ended), request=None)

    def end_tools(self, call_ids: Iterable[str], outcome: str) -> SpanState:
        """The named tool spans still open end here, with `outcome`."""
        state = self
        for call_id in call_ids:
            index = state.tools.get(call_id)
            if index is not None and state.spans[index].end_ns is None:
                state = state.put(index, state.spans[index].ended(state.now,
                                                                  {c.TOOL_OUTCOME: outcome}))
        return state


_NOTICES = (LlmRetried, LlmRetryStopped, JpegResent)
"""What the HTTP edge reports while a request is in flight: these do not end it."""
_IN_FLIGHT = (*_NOTICES, ResponseReceived, RequestRefused)


def evolve_spans(state: SpanState, envelope: Envelope) -> SpanState:
    """The fold's step: one envelope of the turn, in seq order."""
    event = envelope.event
    if not state.began:
        if not isinstance(event, TurnStarted | SessionStarted):
            return _replace(state, began=True)
        session = isinstance(event, SessionStarted)
        name = (f"{c.GATEWAY_SESSION} {event.client}" if isinstance(event, SessionStarted)
                else f"{c.INVOKE_AGENT} {event.agent}")
        root = Draft(name=name, span_id=span_id(envelope.turn_id, envelope.seq), parent=None,
                     kind="internal", start_ns=time_ns(envelope.at))
        state = _replace(state, began=True, session=session, spans=(root,),
                         turn_id=envelope.turn_id)
    elif not state.spans:
        return state
    state = _replace(state, now=time_ns(envelope.at),
                     deliveries=evolve_deliveries(state.deliveries, envelope))
    if state.request is not None and not isinstance(event, _IN_FLIGHT):
        state = _cut_short(state, event)
    state = _step(state, envelope)
    if state.capture:
        state = _replace(state, turn=evolve_turn(state.turn, event))
    return state


def _cut_short(state: SpanState, event: object) -> SpanState:
    """The request in flight ends without an answer or a refusal: interrupted, lost with a
    process that died, or failed (retries exhausted, a broken answer)."""
    if isinstance(event, TurnInterrupted):
        return state.end_request("interrupted")
    if isinstance(event, TurnTakenOver):
        return state.end_request("lost")
    index = state.request
    assert index is not None
    state = state.put(index, state.spans[index].fail("", state.last_error_type or c.ERROR_OTHER))
    return _replace(state, failed=(*state.failed, index)).end_request("failed")


def _step(state: SpanState, envelope: Envelope) -> SpanState:
    event, now, capture = envelope.event, state.now, state.capture
    match event:
        case TurnStarted():
            return state.on_root(of.of_turn(event, state.turn_id, capture=capture))
        case RequestSent():
            carried = state.deliveries.requests[-1].sent.images
            state, index = state.start(Draft(
                name=f"{c.CHAT} {event.model}", span_id=span_id(state.turn_id, envelope.seq),
                parent=state.spans[0].span_id, kind="client", start_ns=now,
                attributes=of.of_request(event, carried, moved_to=state.moved_to,
                                         turn=state.turn if capture else None)))
            return _replace(state, request=index, requests=(*state.requests, index),
                            moved_to="", last_error_type="")
        case ResponseReceived():
            if state.request is not None:
                state = state.on_request(of.of_response(event, capture=capture))
                state = state.end_request(state.deliveries.requests[-1].outcome)
            return _replace(state, answered=state.answered + 1,
                            input_tokens=state.input_tokens + event.usage.input_tokens,
                            output_tokens=state.output_tokens + event.usage.output_tokens)
        case RequestRefused():
            if state.request is None:
                return state
            refused = state.spans[state.request].fail(
                event.message or f"HTTP {event.status}",
                event.error_type or event.code or str(event.status))
            state = state.put(state.request, refused.set(of.of_refusal(event)))
            return state.end_request(state.deliveries.requests[-1].outcome)
        case LlmRetried():
            if state.request is None:
                return state
            draft = state.spans[state.request]
            count = draft.attributes.get(c.RETRIES, 0)
            assert isinstance(count, int)
            draft = draft.add(TraceEvent(name=c.EVENT_RETRY, time_ns=now, attributes={
                **of.of_retry(event), c.RETRY_DELAY_MS: event.delay_ms}))
            return state.put(state.request, draft.set({c.RETRIES: count + 1}))
        case LlmRetryStopped():
            state = _replace(state, last_error_type=event.code or event.error_class)
            if state.request is None:
                return state
            return state.put(state.request, state.spans[state.request].add(TraceEvent(
                name=c.EVENT_CALL_ENDED, time_ns=now,
                attributes={**of.of_retry(event), c.CALL_END: call_end(event)})))
        case JpegResent():
            return state.on_request({c.JPEG_RESEND_CONVERTED: event.converted})
        case PlacementLearned():
            return state.on_last_request(
                {c.PLACEMENT_LEARNED: f"{event.placement}:{event.outcome}"})
        case PlacementChanged():
            return _replace(state, moved_to=event.placement)
        case ImagesStripped():
            return state.on_last_request({c.FALLBACK_STRIPPED: event.removed,
                                          c.FALLBACK_STRIPPED_DIGESTS: list(event.digests)})
        case FallbackSettled():
            return state.on_last_request({c.FALLBACK_OUTCOME: event.outcome}).on_root(
                {c.FALLBACK_OUTCOME: event.outcome})
        case ToolCalled():
            state, index = state.start(Draft(
                name=f"{c.EXECUTE_TOOL} {event.name}",
                span_id=span_id(state.turn_id, envelope.seq), parent=state.spans[0].span_id,
                kind="internal", start_ns=now,
                attributes=of.of_tool_call(event, capture=capture)))
            return _replace(state, tools={**state.tools, event.call_id: index})
        case ImagesNormalized():
            state = state.on_tool(event.call_id, of.of_normalized(event))
            return _replace(state, images=state.images + len(event.images))
        case ImagesDropped():
            state = state.on_tool(event.call_id, of.of_drops(event))
            return _replace(state, dropped=state.dropped + len(event.drops))
        case ToolResultRecorded():
            return _tool_result(state, event)
        case ImagesCapped():
            return _capped(state, event)
        case RepeatDetected():
            if c.REPEAT_TOOL in state.spans[0].attributes:
                return state
            return state.on_root({c.REPEAT_TOOL: event.name, c.REPEAT_COUNT: event.count,
                                  c.REPEAT_ROUND: event.round})
        case TurnInterrupted():
            state = state.on_root({c.INTERRUPT_CAUSE: event.cause,
                                   c.INTERRUPT_DURING: event.during,
                                   c.INTERRUPT_ROUND: event.round})
            return state.end_tools(state.tools, "interrupted")
        case TurnTakenOver():
            state = state.put(0, state.spans[0].add(TraceEvent(
                name=c.EVENT_TAKEOVER, time_ns=now, attributes={
                    c.ROUND: event.round, c.TAKEOVER_WORKER: event.worker,
                    c.TAKEOVER_IMAGES_LOST: len(event.images_lost),
                    c.TAKEOVER_CALLS_LOST: len(event.calls_lost)})))
            return state.end_tools(event.calls_lost, "lost")
        case TurnEnded():
            return _turn_ended(state, event)
        case SessionStarted():
            return state.on_root(of.of_session(event, state.turn_id))
        case ResultSent():
            return state.on_tool(event.call_id, {c.IMAGES_SENT: list(event.images)})
        case SessionEnded():
            state = state.end_tools(event.unanswered, "unanswered")
            root = state.spans[0].set({c.SESSION_STOP: event.cause, c.SESSION_CALLS: event.calls})
            return state.put(0, _replace(root, end_ns=state.now))
        case _:
            return state  # RoundStarted, and any kind this projection has no use for


def _tool_result(state: SpanState, event: ToolResultRecorded) -> SpanState:
    index = state.tools.get(event.call_id)
    if index is None or state.spans[index].end_ns is not None:
        return state
    called = state.spans[index].set(of.of_result(event, capture=state.capture))
    if not event.ok:
        called = called.fail(event.fault or "the tool reported an error", "tool_error")
    return state.put(index, _replace(called, end_ns=state.now))


def _capped(state: SpanState, event: ImagesCapped) -> SpanState:
    state = state.put(0, state.spans[0].add(TraceEvent(
        name=c.EVENT_CAP, time_ns=state.now, attributes={
            c.ROUND: event.round, c.CAP_REMOVED: event.removed, c.CAP_KEPT: event.kept,
            c.CAP_REMOVED_DIGESTS: list(event.removed_digests)})))
    for cut in event.cuts:
        index = state.tools.get(cut.call_id)
        if index is not None:
            removed = state.spans[index].attributes.get(c.CAP_REMOVED, 0)
            assert isinstance(removed, int)
            state = state.on_tool(cut.call_id, {c.CAP_REMOVED: removed + cut.removed,
                                                c.CAP_KEPT: cut.keep})
    return _replace(state, capped=state.capped + event.removed)


def _turn_ended(state: SpanState, event: TurnEnded) -> SpanState:
    root = state.spans[0].set({c.TURN_STOP: event.stop, c.TURN_ROUNDS: event.rounds})
    if state.capture and event.answer:
        root = root.set({c.OUTPUT_MESSAGES: content.output(event.answer, [], event.stop)})
    if event.error:
        for index in state.failed:
            state = state.put(index, _replace(state.spans[index], description=event.error))
        error_type = next((state.spans[i].error_type for i in reversed(state.requests)
                           if state.spans[i].error_type), c.ERROR_OTHER)
        root = root.fail(event.error, error_type)
    return state.put(0, _replace(root, end_ns=state.now))


def finish(state: SpanState) -> list[TraceSpan]:
    """The spans of the folded record. A record without `TurnEnded` (the process died) ends
    every open span at its last event, with `fuseforks.turn.stop = "cut"` (a session without
    `SessionEnded`: `fuseforks.session.stop = "cut"`)."""
    if not state.spans:
        return []
    if state.spans[0].end_ns is None:
        state = state.on_root({c.SESSION_STOP if state.session else c.TURN_STOP: "cut"})
        if state.request is not None:
            state = state.end_request("unanswered")
        for call_id, index in state.tools.items():
            if state.spans[index].end_ns is None:
                state = state.on_tool(call_id, {c.TOOL_OUTCOME: "unanswered"})
    totals: Attributes = {}
    if state.answered:
        totals.update({c.USAGE_INPUT_TOKENS: state.input_tokens,
                       c.USAGE_OUTPUT_TOKENS: state.output_tokens})
    totals[c.IMAGES_COUNT] = state.images
    if state.dropped:
        totals[c.IMAGES_DROPPED] = state.dropped
    if state.capped:
        totals[c.CAP_REMOVED] = state.capped
    state = state.on_root(totals)
    trace = trace_id(state.turn_id)
    return [draft.freeze(trace, state.now) for draft in state.spans]


def turn_spans(history: Iterable[Envelope], *, capture_content: bool = False) -> list[TraceSpan]:
    """The spans of one turn's events (in seq order), the turn's span first, the others in the
    order they start; a gateway session's alike. Nothing for a record that begins otherwise."""
    state = SpanState(capture=capture_content)
    for envelope in history:
        state = evolve_spans(state, envelope)
    return finish(state)
