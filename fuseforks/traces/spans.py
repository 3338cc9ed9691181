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
its last event, with `fuseforks.turn.stop = "cut"`.

The placement ladder shows on the chat spans: a refusal says what it was about
(`fuseforks.refusal`: image, placement, parameter, other), the request a `PlacementLearned`
concerns carries `fuseforks.placement.learned` (`native:refused`, `alternate:received`, ...), and
the request that follows a `PlacementChanged` carries `fuseforks.placement.changed` (the placement
its tool images moved to).

Content — the user's request, the system prompt, the model's answers, tool arguments and tool
bodies — is attached only when asked for (`capture_content`), in the conventions' JSON message
format. Images are never content: a span names them by digest, format and size only, and there is
no pixel or base64 in any event to begin with.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
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
    ToolSpecRecord,
    TurnEnded,
    TurnInterrupted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.projections.messages import chat_request
from fuseforks.projections.turn_state import TurnState, evolve_turn
from fuseforks.traces import conventions as c

AttributeValue = str | bool | int | float | list[str] | list[int]
Attributes = dict[str, AttributeValue]
SpanKind = Literal["internal", "client"]
SpanStatus = Literal["unset", "error"]


class TraceEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A span event: something that happened at one moment inside a span (a retry, a cap)."""

    name: str
    time_ns: int
    attributes: Attributes = {}


class TraceSpan(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    trace_id: int
    span_id: int
    parent_span_id: int | None
    kind: SpanKind
    start_ns: int
    end_ns: int
    attributes: Attributes
    events: list[TraceEvent] = []
    status: SpanStatus = "unset"
    status_description: str = ""


_TRUE = frozenset({"true", "span_only", "span_and_event"})


def capture_content(environ: Mapping[str, str] | None = None) -> bool:
    """The conventions' content switch: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` set
    to `true` (or `SPAN_ONLY` / `SPAN_AND_EVENT`, the newer spellings), case-insensitive. Anything
    else, or unset, captures no content."""
    value = (os.environ if environ is None else environ).get(c.CAPTURE_CONTENT_ENV, "")
    return value.strip().lower() in _TRUE


def trace_id(turn_id: str) -> int:
    digest = hashlib.sha256(b"fuseforks.trace\x00" + turn_id.encode()).digest()
    return int.from_bytes(digest[:16], "big") or 1


def span_id(turn_id: str, seq: int) -> int:
    digest = hashlib.sha256(f"fuseforks.span\x00{turn_id}\x00{seq}".encode()).digest()
    return int.from_bytes(digest[:8], "big") or 1


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def time_ns(at: str) -> int:
    """An envelope's ISO-8601 time as nanoseconds since the epoch, exactly (no float)."""
    moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


# --- content in the conventions' message format --------------------------------------------------

_json = msgspec.json.Encoder()
_arguments = msgspec.json.Decoder()


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def _message(message: Message) -> dict[str, Any]:
    match message:
        case SystemMessage() | UserMessage():
            return {"role": "system" if isinstance(message, SystemMessage) else "user",
                    "parts": [_text(message.text)]}
        case AssistantMessage():
            parts = [_text(message.text)] if message.text else []
            parts += [{"type": "tool_call", "id": call.id, "name": call.name,
                       "arguments": call.arguments} for call in message.tool_calls]
            return {"role": "assistant", "parts": parts}
        case ToolResultMessage():
            return {"role": "tool", "parts": [
                {"type": "tool_call_response", "id": message.tool_call_id,
                 "response": message.text}]}
    raise AssertionError(f"unknown message {message!r}")


def _strs(values: Iterable[str]) -> list[str]:
    return list(values)


def _encode(value: Any) -> str:
    return _json.encode(value).decode()


def _tool_definitions(tools: list[ToolSpecRecord]) -> str:
    return _encode([{"type": "function", "name": t.name, "description": t.description,
                     "parameters": _arguments.decode(t.input_schema)} for t in tools])


def _output(text: str, calls: list[dict[str, Any]], finish_reason: str) -> str:
    parts = ([_text(text)] if text else []) + calls
    return _encode([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])


# --- the projection ------------------------------------------------------------------------------


class _Open:
    """A span being built; frozen into a `TraceSpan` at the end."""

    def __init__(self, name: str, span_id: int, parent: int | None, kind: SpanKind,
                 start_ns: int, attributes: Attributes) -> None:
        self.name = name
        self.span_id = span_id
        self.parent = parent
        self.kind: SpanKind = kind
        self.start_ns = start_ns
        self.end_ns: int | None = None
        self.attributes = attributes
        self.events: list[TraceEvent] = []
        self.status: SpanStatus = "unset"
        self.description = ""
        self.error_type = ""

    def fail(self, description: str, error_type: str) -> None:
        self.status, self.description = "error", description
        self.attributes[c.ERROR_TYPE] = self.error_type = error_type

    def freeze(self, trace: int, last_ns: int) -> TraceSpan:
        return TraceSpan(
            name=self.name, trace_id=trace, span_id=self.span_id, parent_span_id=self.parent,
            kind=self.kind, start_ns=self.start_ns,
            end_ns=self.end_ns if self.end_ns is not None else last_ns,
            attributes=self.attributes, events=self.events, status=self.status,
            status_description=self.description)


_NOTICES = (LlmRetried, LlmRetryStopped, JpegResent)
"""What the HTTP edge reports while a request is in flight: these do not end it."""


def turn_spans(history: Iterable[Envelope], *, capture_content: bool = False) -> list[TraceSpan]:
    """The spans of one turn's events (in seq order), the turn's span first, the others in the
    order they start; a gateway session's alike. Nothing for a record that begins otherwise."""
    envelopes = list(history)
    started = envelopes[0].event if envelopes else None
    if not isinstance(started, TurnStarted | SessionStarted):
        return []
    turn_id = envelopes[0].turn_id
    state = TurnState()
    spans: list[_Open] = []
    requests: list[_Open] = []
    tools: dict[str, _Open] = {}
    request: _Open | None = None  # the request in flight
    failed: list[_Open] = []  # requests that failed without a refusal: the turn's error says why
    usage = {c.USAGE_INPUT_TOKENS: 0, c.USAGE_OUTPUT_TOKENS: 0}
    answered = 0
    images = dropped = capped = 0
    last_error_type = ""
    moved_to = ""  # a `PlacementChanged` waiting for the request that follows it
    now = time_ns(envelopes[0].at)

    name = (f"{c.INVOKE_AGENT} {started.agent}" if isinstance(started, TurnStarted)
            else f"{c.GATEWAY_SESSION} {started.client}")
    root = _Open(name, span_id(turn_id, envelopes[0].seq), None, "internal", now, {})
    spans.append(root)

    def close_request(outcome: str) -> None:
        nonlocal request
        assert request is not None
        request.attributes[c.REQUEST_OUTCOME] = outcome
        request.end_ns = now
        request = None

    for envelope in envelopes:
        event = envelope.event
        now = time_ns(envelope.at)
        if request is not None and not isinstance(
                event, (*_NOTICES, ResponseReceived, RequestRefused)):
            if isinstance(event, TurnInterrupted):
                close_request("interrupted")
            elif isinstance(event, TurnTakenOver):
                close_request("lost")
            else:
                failed.append(request)
                request.fail("", last_error_type or c.ERROR_OTHER)
                close_request("failed")
        match event:
            case TurnStarted():
                attributes: Attributes = {
                    c.OPERATION_NAME: c.INVOKE_AGENT,
                    c.PROVIDER_NAME: c.PROVIDERS.get(event.wire, event.wire),
                    c.AGENT_NAME: event.agent,
                    **({c.CONVERSATION_ID: event.conversation_id} if event.conversation_id
                       else {}),
                    c.REQUEST_MODEL: event.model,
                    c.SERVER_ADDRESS: event.endpoint_host,
                    c.WIRE: event.wire,
                    c.TURN_ID: turn_id,
                    c.TURN_LANGUAGE: event.language,
                    c.TURN_PLACEMENT: event.placement,
                    c.TURN_MAX_ROUNDS: event.max_rounds,
                    c.TURN_IMAGE_CAP: event.image_cap,
                    c.HISTORY_LENGTH: len(event.history),
                    c.HISTORY_DROPPED: event.history_dropped,
                }
                if capture_content:
                    if event.system:
                        attributes[c.SYSTEM_INSTRUCTIONS] = _encode([_text(event.system)])
                    messages = []
                    for exchange in event.history:
                        messages += [_message(UserMessage(text=exchange.request)),
                                     _message(AssistantMessage(text=exchange.answer))]
                    messages.append(_message(UserMessage(text=event.request)))
                    attributes[c.INPUT_MESSAGES] = _encode(messages)
                root.attributes.update(attributes)
            case RequestSent():
                attributes = {
                    c.OPERATION_NAME: c.CHAT,
                    c.PROVIDER_NAME: c.PROVIDERS.get(event.wire, event.wire),
                    c.REQUEST_MODEL: event.model,
                    c.SERVER_ADDRESS: event.endpoint_host,
                    c.WIRE: event.wire,
                    c.ROUND: event.round,
                    c.REQUEST_PURPOSE: event.purpose,
                    c.REQUEST_MESSAGES: event.message_count,
                }
                if event.summary:
                    attributes[c.REQUEST_SUMMARY] = True
                if moved_to:
                    attributes[c.PLACEMENT_CHANGED] = moved_to
                    moved_to = ""
                if event.images:
                    attributes[c.IMAGES_COUNT] = len(event.images)
                    attributes[c.IMAGES_DIGESTS] = [i.digest for i in event.images]
                    attributes[c.IMAGES_PLACEMENTS] = _strs(i.placement for i in event.images)
                    attributes[c.IMAGES_CALL_IDS] = [i.call_id for i in event.images]
                if capture_content and state.started is not None:
                    sent = chat_request(state, summary=event.summary)
                    if sent.system:
                        attributes[c.SYSTEM_INSTRUCTIONS] = _encode([_text(sent.system)])
                    attributes[c.INPUT_MESSAGES] = _encode([_message(m) for m in sent.messages])
                    if state.started.tools:
                        attributes[c.TOOL_DEFINITIONS] = _tool_definitions(state.started.tools)
                request = _Open(f"{c.CHAT} {event.model}", span_id(turn_id, envelope.seq),
                                root.span_id, "client", now, attributes)
                last_error_type = ""
                spans.append(request)
                requests.append(request)
            case ResponseReceived():
                if request is not None:
                    attributes = request.attributes
                    attributes[c.USAGE_INPUT_TOKENS] = event.usage.input_tokens
                    attributes[c.USAGE_OUTPUT_TOKENS] = event.usage.output_tokens
                    if event.usage.cache_read_tokens:
                        attributes[c.USAGE_CACHE_READ_INPUT_TOKENS] = event.usage.cache_read_tokens
                    if event.usage.cache_write_tokens:
                        attributes[c.USAGE_CACHE_CREATION_INPUT_TOKENS] = \
                            event.usage.cache_write_tokens
                    if event.stop_reason:
                        attributes[c.RESPONSE_FINISH_REASONS] = [event.stop_reason]
                    attributes[c.RESPONSE_TOOL_CALLS] = len(event.tool_calls)
                    if capture_content:
                        calls = [{"type": "tool_call", "id": call.call_id, "name": call.name,
                                  "arguments": _arguments.decode(call.arguments)}
                                 for call in event.tool_calls]
                        attributes[c.OUTPUT_MESSAGES] = _output(event.text, calls,
                                                                event.stop_reason)
                    close_request("received")
                answered += 1
                usage[c.USAGE_INPUT_TOKENS] += event.usage.input_tokens
                usage[c.USAGE_OUTPUT_TOKENS] += event.usage.output_tokens
            case LlmRetried():
                if request is not None:
                    retry = _retry_attributes(event)
                    retry[c.RETRY_DELAY_MS] = event.delay_ms
                    request.events.append(TraceEvent(name=c.EVENT_RETRY, time_ns=now,
                                                     attributes=retry))
                    count = request.attributes.get(c.RETRIES, 0)
                    assert isinstance(count, int)
                    request.attributes[c.RETRIES] = count + 1
            case LlmRetryStopped():
                last_error_type = event.code or event.error_class
                if request is not None:
                    request.events.append(TraceEvent(name=c.EVENT_RETRY_STOPPED, time_ns=now,
                                                     attributes=_retry_attributes(event)))
            case JpegResent():
                if request is not None:
                    request.attributes[c.JPEG_RESEND_CONVERTED] = event.converted
            case RequestRefused():
                if request is not None:
                    request.fail(event.message or f"HTTP {event.status}",
                                 event.error_type or event.code or str(event.status))
                    attributes = request.attributes
                    attributes[c.REFUSAL_STATUS] = event.status
                    if event.error_type:
                        attributes[c.REFUSAL_ERROR_TYPE] = event.error_type
                    if event.code:
                        attributes[c.REFUSAL_CODE] = event.code
                    attributes[c.REFUSAL_IMAGES_REJECTED] = event.images_rejected
                    attributes[c.REFUSAL] = event.refusal
                    close_request("refused")
            case PlacementLearned():
                if requests:
                    requests[-1].attributes[c.PLACEMENT_LEARNED] = \
                        f"{event.placement}:{event.outcome}"
            case PlacementChanged():
                moved_to = event.placement
            case ImagesStripped():
                if requests:
                    requests[-1].attributes[c.FALLBACK_STRIPPED] = event.removed
                    requests[-1].attributes[c.FALLBACK_STRIPPED_DIGESTS] = list(event.digests)
            case FallbackSettled():
                if requests:
                    requests[-1].attributes[c.FALLBACK_OUTCOME] = event.outcome
                root.attributes[c.FALLBACK_OUTCOME] = event.outcome
            case ToolCalled():
                attributes = {
                    c.OPERATION_NAME: c.EXECUTE_TOOL,
                    c.TOOL_NAME: event.name,
                    c.TOOL_CALL_ID: event.call_id,
                    c.TOOL_TYPE: "function",
                    c.ROUND: event.round,
                }
                if event.server:
                    attributes[c.TOOL_SERVER] = event.server
                if capture_content:
                    attributes[c.TOOL_CALL_ARGUMENTS] = event.arguments
                tool = _Open(f"{c.EXECUTE_TOOL} {event.name}", span_id(turn_id, envelope.seq),
                             root.span_id, "internal", now, attributes)
                tools[event.call_id] = tool
                spans.append(tool)
            case ImagesNormalized():
                if (called := tools.get(event.call_id)) is not None:
                    metas = event.images
                    called.attributes.update({
                        c.IMAGES_FORMATS: [m.source_format for m in metas],
                        c.IMAGES_MEDIA_TYPES: [m.media_type for m in metas],
                        c.IMAGES_PATHS: _strs(m.path for m in metas),
                        c.IMAGES_WIDTHS: [m.width for m in metas],
                        c.IMAGES_HEIGHTS: [m.height for m in metas],
                        c.IMAGES_SIZES: [m.size for m in metas],
                        c.IMAGES_SOURCE_SIZES: [m.source_size for m in metas],
                    })
                images += len(event.images)
            case ImagesDropped():
                if (called := tools.get(event.call_id)) is not None:
                    called.attributes.update({
                        c.IMAGES_DROPPED: len(event.drops),
                        c.DROP_INDEXES: [d.index for d in event.drops],
                        c.DROP_REASONS: _strs(d.reason for d in event.drops),
                        c.DROP_DETAILS: [d.detail for d in event.drops],
                    })
                dropped += len(event.drops)
            case ToolResultRecorded():
                if (called := tools.get(event.call_id)) is not None and called.end_ns is None:
                    attributes = called.attributes
                    attributes[c.TOOL_OUTCOME] = "ok" if event.ok else "error"
                    attributes[c.TOOL_BODY_CHARS] = len(event.body)
                    if event.fault:
                        attributes[c.TOOL_FAULT] = event.fault
                    if event.image_digests:
                        attributes[c.IMAGES_COUNT] = len(event.image_digests)
                        attributes[c.IMAGES_DIGESTS] = list(event.image_digests)
                        attributes[c.IMAGES_ATTACHED] = event.attached
                    if capture_content:
                        attributes[c.TOOL_CALL_RESULT] = event.body
                    if not event.ok:
                        called.fail(event.fault or "the tool reported an error", "tool_error")
                    called.end_ns = now
            case ImagesCapped():
                root.events.append(TraceEvent(name=c.EVENT_CAP, time_ns=now, attributes={
                    c.ROUND: event.round, c.CAP_REMOVED: event.removed, c.CAP_KEPT: event.kept,
                    c.CAP_REMOVED_DIGESTS: list(event.removed_digests)}))
                for cut in event.cuts:
                    if (called := tools.get(cut.call_id)) is not None:
                        removed = called.attributes.get(c.CAP_REMOVED, 0)
                        assert isinstance(removed, int)
                        called.attributes[c.CAP_REMOVED] = removed + cut.removed
                        called.attributes[c.CAP_KEPT] = cut.keep
                capped += event.removed
            case RepeatDetected():
                if c.REPEAT_TOOL not in root.attributes:
                    root.attributes.update({c.REPEAT_TOOL: event.name,
                                            c.REPEAT_COUNT: event.count,
                                            c.REPEAT_ROUND: event.round})
            case TurnInterrupted():
                root.attributes.update({c.INTERRUPT_CAUSE: event.cause,
                                        c.INTERRUPT_DURING: event.during,
                                        c.INTERRUPT_ROUND: event.round})
                for tool in tools.values():
                    if tool.end_ns is None:
                        tool.attributes[c.TOOL_OUTCOME] = "interrupted"
                        tool.end_ns = now
            case TurnTakenOver():
                root.events.append(TraceEvent(name=c.EVENT_TAKEOVER, time_ns=now, attributes={
                    c.ROUND: event.round, c.TAKEOVER_WORKER: event.worker,
                    c.TAKEOVER_IMAGES_LOST: len(event.images_lost),
                    c.TAKEOVER_CALLS_LOST: len(event.calls_lost)}))
                for call_id in event.calls_lost:
                    if (lost := tools.get(call_id)) is not None and lost.end_ns is None:
                        lost.attributes[c.TOOL_OUTCOME] = "lost"
                        lost.end_ns = now
            case SessionStarted():
                root.attributes.update({
                    c.OPERATION_NAME: c.GATEWAY_SESSION, c.AGENT_NAME: event.agent,
                    c.CLIENT_NAME: event.client, c.CLIENT_VERSION: event.client_version,
                    c.GATEWAY_PROFILE: event.profile, c.GATEWAY_TRANSPORT: event.transport,
                    c.TURN_ID: turn_id, c.TURN_LANGUAGE: event.language})
            case ResultSent():
                if (called := tools.get(event.call_id)) is not None:
                    called.attributes[c.IMAGES_SENT] = list(event.images)
            case SessionEnded():
                root.attributes[c.SESSION_STOP] = event.cause
                root.attributes[c.SESSION_CALLS] = event.calls
                for call_id in event.unanswered:
                    if (open_call := tools.get(call_id)) is not None and open_call.end_ns is None:
                        open_call.attributes[c.TOOL_OUTCOME] = "unanswered"
                        open_call.end_ns = now
                root.end_ns = now
            case TurnEnded():
                root.attributes[c.TURN_STOP] = event.stop
                root.attributes[c.TURN_ROUNDS] = event.rounds
                if capture_content and event.answer:
                    root.attributes[c.OUTPUT_MESSAGES] = _output(event.answer, [], event.stop)
                if event.error:
                    for span in failed:
                        span.description = event.error
                    root.fail(event.error, next(
                        (r.error_type for r in reversed(requests) if r.error_type),
                        c.ERROR_OTHER))
                root.end_ns = now
            case _:
                pass  # RoundStarted, and any kind this projection has no use for
        if capture_content:
            state = evolve_turn(state, event)

    if root.end_ns is None:  # the record has no end: the process died mid-turn
        root.attributes[c.SESSION_STOP if isinstance(started, SessionStarted)
                        else c.TURN_STOP] = "cut"
        if request is not None:
            close_request("unanswered")
        for tool in tools.values():
            if tool.end_ns is None:
                tool.attributes[c.TOOL_OUTCOME] = "unanswered"
    if answered:
        root.attributes.update(usage)
    root.attributes[c.IMAGES_COUNT] = images
    if dropped:
        root.attributes[c.IMAGES_DROPPED] = dropped
    if capped:
        root.attributes[c.CAP_REMOVED] = capped
    trace = trace_id(turn_id)
    return [span.freeze(trace, now) for span in spans]


def _retry_attributes(event: LlmRetried | LlmRetryStopped) -> Attributes:
    """What a retry and a give-up both say: the attempt, the error class, status and code."""
    attributes: Attributes = {c.RETRY_ATTEMPT: event.attempt,
                              c.RETRY_ERROR_CLASS: event.error_class}
    if event.status is not None:
        attributes[c.RETRY_STATUS] = event.status
    if event.code:
        attributes[c.RETRY_CODE] = event.code
    return attributes
