"""The names the spans carry: the OpenTelemetry semantic conventions for generative AI, and
fuseforks' own names under the one prefix `fuseforks.` for what the conventions have no name for.

The convention names are spelled out here rather than imported, so that the projection needs no
OpenTelemetry package; `tests/traces/test_conventions.py` holds every one of them equal to the
constant of the installed `opentelemetry-semantic-conventions` (0.66b2, schema 1.44.0, whose
`gen_ai.*` attributes still carry these names while the GenAI conventions move to their own
repository). `gen_ai.provider.name` is the current name of what older releases called
`gen_ai.system`.
"""

from __future__ import annotations

from typing import Final

from fuseforks.core.names import WireName

# --- the GenAI conventions ------------------------------------------------------------------------

OPERATION_NAME: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
AGENT_NAME: Final = "gen_ai.agent.name"
CONVERSATION_ID: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"

# Content: attached only when the user opts in (see `fuseforks.traces.spans.capture_content`).
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
TOOL_DEFINITIONS: Final = "gen_ai.tool.definitions"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
CONTENT_ATTRIBUTES: Final = frozenset({INPUT_MESSAGES, OUTPUT_MESSAGES, SYSTEM_INSTRUCTIONS,
                                       TOOL_DEFINITIONS, TOOL_CALL_ARGUMENTS, TOOL_CALL_RESULT})

# General conventions.
SERVER_ADDRESS: Final = "server.address"
ERROR_TYPE: Final = "error.type"
ERROR_OTHER: Final = "_OTHER"

INVOKE_AGENT: Final = "invoke_agent"
CHAT: Final = "chat"
EXECUTE_TOOL: Final = "execute_tool"

CAPTURE_CONTENT_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

PROVIDERS: Final[dict[WireName, str]] = {
    "anthropic": "anthropic",
    "openai-compat": "openai",
    "openai-responses": "openai",
    "gemini": "gcp.gemini",
    "xai-responses": "x_ai",
    "meta-responses": "meta",
    "perplexity-responses": "perplexity",
    "bedrock-converse": "aws.bedrock",
    "vertex-gemini": "gcp.vertex_ai",
    "vertex-anthropic": "gcp.vertex_ai",
    "azure-chat": "azure.ai.openai",
    "azure-responses": "azure.ai.openai",
    "ollama": "ollama",
    "vllm": "vllm",
    "llamacpp": "llama.cpp",
    "lmstudio": "lmstudio",
}
"""`gen_ai.provider.name` per wire. Every value but Meta's and the local servers' is a member of
the convention's list; those have none there, so each gets its own lowercase name, as the
convention asks. The wire itself is `fuseforks.wire` (openai-compat and openai-responses are
both `openai`, the two Vertex wires both `gcp.vertex_ai`)."""

# --- fuseforks' own -------------------------------------------------------------------------------

PREFIX: Final = "fuseforks."

WIRE: Final = "fuseforks.wire"
TURN_ID: Final = "fuseforks.turn.id"
TURN_LANGUAGE: Final = "fuseforks.turn.language"
TURN_PLACEMENT: Final = "fuseforks.turn.placement"
TURN_MAX_ROUNDS: Final = "fuseforks.turn.max_rounds"
TURN_IMAGE_CAP: Final = "fuseforks.turn.image_cap"
TURN_ROUNDS: Final = "fuseforks.turn.rounds"
TURN_STOP: Final = "fuseforks.turn.stop"
"""answered, tool_limit, repeat, error, interrupted — or `cut`: the record has no end."""
HISTORY_LENGTH: Final = "fuseforks.history.length"
HISTORY_DROPPED: Final = "fuseforks.history.dropped"
ROUND: Final = "fuseforks.round"

REQUEST_PURPOSE: Final = "fuseforks.request.purpose"
REQUEST_MESSAGES: Final = "fuseforks.request.messages"
REQUEST_SUMMARY: Final = "fuseforks.request.summary"
REQUEST_OUTCOME: Final = "fuseforks.request.outcome"
"""received, refused, failed, interrupted, or unanswered (the record ends before an answer)."""
RESPONSE_TOOL_CALLS: Final = "fuseforks.response.tool_calls"
RETRIES: Final = "fuseforks.retries"
JPEG_RESEND_CONVERTED: Final = "fuseforks.jpeg_resend.converted"
REFUSAL_STATUS: Final = "fuseforks.refusal.status"
REFUSAL_ERROR_TYPE: Final = "fuseforks.refusal.error_type"
REFUSAL_CODE: Final = "fuseforks.refusal.code"
REFUSAL_IMAGES_REJECTED: Final = "fuseforks.refusal.images_rejected"
REFUSAL: Final = "fuseforks.refusal"
"""What a refusal was about: image, placement, parameter, or other (`RequestRefused.refusal`)."""
PLACEMENT_CHANGED: Final = "fuseforks.placement.changed"
"""On the request after a `PlacementChanged`: the placement its tool images moved to."""
PLACEMENT_LEARNED: Final = "fuseforks.placement.learned"
"""On the request a `PlacementLearned` concerns: `{placement}:{outcome}`, e.g. `native:refused`."""
FALLBACK_STRIPPED: Final = "fuseforks.fallback.stripped"
FALLBACK_STRIPPED_DIGESTS: Final = "fuseforks.fallback.stripped_digests"
FALLBACK_OUTCOME: Final = "fuseforks.fallback.outcome"

TOOL_SERVER: Final = "fuseforks.tool.server"
TOOL_OUTCOME: Final = "fuseforks.tool.outcome"
"""ok, error, interrupted, or unanswered (the record ends before the result)."""
TOOL_FAULT: Final = "fuseforks.tool.fault"
TOOL_BODY_CHARS: Final = "fuseforks.tool.body_chars"

IMAGES_COUNT: Final = "fuseforks.images.count"
IMAGES_DIGESTS: Final = "fuseforks.images.digests"
IMAGES_PLACEMENTS: Final = "fuseforks.images.placements"
IMAGES_CALL_IDS: Final = "fuseforks.images.call_ids"
IMAGES_ATTACHED: Final = "fuseforks.images.attached"
IMAGES_FORMATS: Final = "fuseforks.images.formats"
IMAGES_MEDIA_TYPES: Final = "fuseforks.images.media_types"
IMAGES_PATHS: Final = "fuseforks.images.paths"
IMAGES_WIDTHS: Final = "fuseforks.images.widths"
IMAGES_HEIGHTS: Final = "fuseforks.images.heights"
IMAGES_SIZES: Final = "fuseforks.images.sizes"
IMAGES_SOURCE_SIZES: Final = "fuseforks.images.source_sizes"
IMAGES_DROPPED: Final = "fuseforks.images.dropped"
DROP_INDEXES: Final = "fuseforks.images.drop_indexes"
DROP_REASONS: Final = "fuseforks.images.drop_reasons"
DROP_DETAILS: Final = "fuseforks.images.drop_details"

CAP_REMOVED: Final = "fuseforks.cap.removed"
CAP_KEPT: Final = "fuseforks.cap.kept"
CAP_REMOVED_DIGESTS: Final = "fuseforks.cap.removed_digests"

REPEAT_TOOL: Final = "fuseforks.repeat.tool"
REPEAT_COUNT: Final = "fuseforks.repeat.count"
REPEAT_ROUND: Final = "fuseforks.repeat.round"

INTERRUPT_CAUSE: Final = "fuseforks.interrupt.cause"
INTERRUPT_DURING: Final = "fuseforks.interrupt.during"
INTERRUPT_ROUND: Final = "fuseforks.interrupt.round"

GATEWAY_SESSION: Final = "gateway_session"
"""The operation of a gateway session's root span: an MCP client's calls through the gateway."""
CLIENT_NAME: Final = "fuseforks.client.name"
CLIENT_VERSION: Final = "fuseforks.client.version"
GATEWAY_PROFILE: Final = "fuseforks.gateway.profile"
GATEWAY_TRANSPORT: Final = "fuseforks.gateway.transport"
SESSION_CALLS: Final = "fuseforks.session.calls"
SESSION_STOP: Final = "fuseforks.session.stop"
IMAGES_SENT: Final = "fuseforks.images.sent"
"""Digests of the images a tool result took back to the gateway's client."""

TAKEOVER_WORKER: Final = "fuseforks.takeover.worker"
TAKEOVER_IMAGES_LOST: Final = "fuseforks.takeover.images_lost"
TAKEOVER_CALLS_LOST: Final = "fuseforks.takeover.calls_lost"

RETRY_ATTEMPT: Final = "fuseforks.retry.attempt"
RETRY_STATUS: Final = "fuseforks.retry.status"
RETRY_ERROR_CLASS: Final = "fuseforks.retry.error_class"
RETRY_CODE: Final = "fuseforks.retry.code"
RETRY_DELAY_MS: Final = "fuseforks.retry.delay_ms"

# Span events (several per span are possible).
EVENT_RETRY: Final = "fuseforks.llm_retry"
EVENT_CALL_ENDED: Final = "fuseforks.llm_call_ended"
"""The HTTP edge gave up on a model call; `CALL_END` says how (`refused`, `failed`, `gave_up`:
the names every reader uses, `fuseforks.projections.words.call_end`)."""
CALL_END: Final = "fuseforks.llm_call.end"
EVENT_CAP: Final = "fuseforks.images_capped"
EVENT_TAKEOVER: Final = "fuseforks.turn_taken_over"
