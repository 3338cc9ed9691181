"""What a span says about one event: the conventions' attributes and fuseforks' own, per kind.

Pure functions of the event (and, for content, of the turn so far); which span they go on is the
fold's business (`fuseforks.traces.spans`). Content — the user's request, the system prompt, the
model's answers, tool arguments and bodies — is added only with `capture` (see
`fuseforks.traces.content`); images are named by digest, format and size, never shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from fuseforks.core.canonical import AssistantMessage, UserMessage
from fuseforks.events.types import (
    ImageDelivery,
    ImagesDropped,
    ImagesNormalized,
    LlmRetried,
    LlmRetryStopped,
    RequestRefused,
    RequestSent,
    ResponseReceived,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    TurnStarted,
)
from fuseforks.projections.messages import chat_request
from fuseforks.projections.turn_state import TurnState
from fuseforks.traces import content
from fuseforks.traces import conventions as c
from fuseforks.traces.types import Attributes


def of_turn(event: TurnStarted, turn_id: str, *, capture: bool) -> Attributes:
    attributes: Attributes = {
        c.OPERATION_NAME: c.INVOKE_AGENT,
        c.PROVIDER_NAME: c.PROVIDERS.get(event.wire, event.wire),
        c.AGENT_NAME: event.agent,
        **({c.CONVERSATION_ID: event.conversation_id} if event.conversation_id else {}),
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
    if capture:
        if event.system:
            attributes[c.SYSTEM_INSTRUCTIONS] = content.encode([content.text_part(event.system)])
        messages = []
        for exchange in event.history:
            messages += [content.message(UserMessage(text=exchange.request)),
                         content.message(AssistantMessage(text=exchange.answer))]
        messages.append(content.message(UserMessage(text=event.request)))
        attributes[c.INPUT_MESSAGES] = content.encode(messages)
    return attributes


def of_session(event: SessionStarted, session_id: str) -> Attributes:
    """A gateway session's span: the client in front of the gateway where a turn names its
    provider and model."""
    return {
        c.OPERATION_NAME: c.GATEWAY_SESSION,
        c.AGENT_NAME: event.agent,
        c.CLIENT_NAME: event.client,
        c.CLIENT_VERSION: event.client_version,
        c.GATEWAY_PROFILE: event.profile,
        c.GATEWAY_TRANSPORT: event.transport,
        c.TURN_ID: session_id,
        c.TURN_LANGUAGE: event.language,
    }


def of_request(event: RequestSent, carried: Sequence[ImageDelivery], *, moved_to: str,
               turn: TurnState | None) -> Attributes:
    """A chat span's opening attributes: the request, the tool images it carried (from the
    delivery fold), the placement the ladder moved them to, and with `turn` (content captured)
    the messages it sent."""
    attributes: Attributes = {
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
    if carried:
        attributes[c.IMAGES_COUNT] = len(carried)
        attributes[c.IMAGES_DIGESTS] = [i.digest for i in carried]
        attributes[c.IMAGES_PLACEMENTS] = [str(i.placement) for i in carried]
        attributes[c.IMAGES_CALL_IDS] = [i.call_id for i in carried]
    if turn is not None and turn.started is not None:
        sent = chat_request(turn, summary=event.summary)
        if sent.system:
            attributes[c.SYSTEM_INSTRUCTIONS] = content.encode([content.text_part(sent.system)])
        attributes[c.INPUT_MESSAGES] = content.encode([content.message(m) for m in sent.messages])
        if turn.started.tools:
            attributes[c.TOOL_DEFINITIONS] = content.tool_definitions(turn.started.tools)
    return attributes


def of_response(event: ResponseReceived, *, capture: bool) -> Attributes:
    usage = event.usage
    attributes: Attributes = {c.USAGE_INPUT_TOKENS: usage.input_tokens,
                              c.USAGE_OUTPUT_TOKENS: usage.output_tokens}
    if usage.cache_read_tokens:
        attributes[c.USAGE_CACHE_READ_INPUT_TOKENS] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes[c.USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write_tokens
    if event.stop_reason:
        attributes[c.RESPONSE_FINISH_REASONS] = [event.stop_reason]
    attributes[c.RESPONSE_TOOL_CALLS] = len(event.tool_calls)
    if capture:
        calls = [{"type": "tool_call", "id": call.call_id, "name": call.name,
                  "arguments": content.decode_arguments(call.arguments)}
                 for call in event.tool_calls]
        attributes[c.OUTPUT_MESSAGES] = content.output(event.text, calls, event.stop_reason)
    return attributes


def of_refusal(event: RequestRefused) -> Attributes:
    attributes: Attributes = {c.REFUSAL_STATUS: event.status}
    if event.error_type:
        attributes[c.REFUSAL_ERROR_TYPE] = event.error_type
    if event.code:
        attributes[c.REFUSAL_CODE] = event.code
    attributes[c.REFUSAL_IMAGES_REJECTED] = event.images_rejected
    attributes[c.REFUSAL] = event.refusal
    return attributes


def of_retry(event: LlmRetried | LlmRetryStopped) -> Attributes:
    """What a retry and a give-up both say: the attempt, the error class, status and code."""
    attributes: Attributes = {c.RETRY_ATTEMPT: event.attempt,
                              c.RETRY_ERROR_CLASS: event.error_class}
    if event.status is not None:
        attributes[c.RETRY_STATUS] = event.status
    if event.code:
        attributes[c.RETRY_CODE] = event.code
    return attributes


def of_tool_call(event: ToolCalled, *, capture: bool) -> Attributes:
    attributes: Attributes = {
        c.OPERATION_NAME: c.EXECUTE_TOOL,
        c.TOOL_NAME: event.name,
        c.TOOL_CALL_ID: event.call_id,
        c.TOOL_TYPE: "function",
        c.ROUND: event.round,
    }
    if event.server:
        attributes[c.TOOL_SERVER] = event.server
    if capture:
        attributes[c.TOOL_CALL_ARGUMENTS] = event.arguments
    return attributes


def of_normalized(event: ImagesNormalized) -> Attributes:
    metas = event.images
    return {
        c.IMAGES_FORMATS: [m.source_format for m in metas],
        c.IMAGES_MEDIA_TYPES: [m.media_type for m in metas],
        c.IMAGES_PATHS: [str(m.path) for m in metas],
        c.IMAGES_WIDTHS: [m.width for m in metas],
        c.IMAGES_HEIGHTS: [m.height for m in metas],
        c.IMAGES_SIZES: [m.size for m in metas],
        c.IMAGES_SOURCE_SIZES: [m.source_size for m in metas],
    }


def of_drops(event: ImagesDropped) -> Attributes:
    return {
        c.IMAGES_DROPPED: len(event.drops),
        c.DROP_INDEXES: [d.index for d in event.drops],
        c.DROP_REASONS: [str(d.reason) for d in event.drops],
        c.DROP_DETAILS: [d.detail for d in event.drops],
    }


def of_result(event: ToolResultRecorded, *, capture: bool) -> Attributes:
    attributes: Attributes = {c.TOOL_OUTCOME: "ok" if event.ok else "error",
                              c.TOOL_BODY_CHARS: len(event.body)}
    if event.fault:
        attributes[c.TOOL_FAULT] = event.fault
    if event.image_digests:
        attributes[c.IMAGES_COUNT] = len(event.image_digests)
        attributes[c.IMAGES_DIGESTS] = list(event.image_digests)
        attributes[c.IMAGES_ATTACHED] = event.attached
    if capture:
        attributes[c.TOOL_CALL_RESULT] = event.body
    return attributes
