"""Anthropic Messages (`POST /v1/messages`).

Placement: native by default. A tool result with images becomes `tool_result.content` = the
image blocks **then** the text block (the order measured against the live API); without images
`content` stays the plain string. Consecutive tool results share one user message, as the API
requires. Alternate (`ChatRequest.placement`): every `tool_result` carries its text only, and one
more user message after the results carries, per result with images, its caption as a text block
then its image blocks (the API joins consecutive user messages into one turn, tool results
first). Parameters are `parameters.ANTHROPIC`: `max_tokens` always (4096 unless the request says),
never `temperature` (the current API has no such parameter).
"""

from __future__ import annotations

from typing import Any, assert_never

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ImageRef,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    system_texts,
)
from fuseforks.core.errors import WireError, WireGarbage
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.wires import parameters
from fuseforks.wires.base import (
    JSON,
    Carrier,
    Endpoint,
    HttpRequest,
    decode_json,
    placement_of,
    tool_arguments,
    with_carriers,
)
from fuseforks.wires.errors import classify_status
from fuseforks.wires.streaming import (
    EVENT_STREAM,
    decode_event,
    stream_cut,
    stream_error,
)

NAME: WireName = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
KEY_ENVS = ("ANTHROPIC_API_KEY",)
PLACEMENT: Placement = "native"  # tests/wires/test_placement.py checks it against the encoding
PLACEMENTS: tuple[Placement, ...] = ("native", "alternate")
PARAMETERS = parameters.ANTHROPIC
API_VERSION = "2023-06-01"


def _image(image: ImageRef, vault: ImageVault) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": image.media_type,
            "data": vault.json_base64(image.digest),
        },
    }


def tool_result_block(message: ToolResultMessage, vault: ImageVault,
                      placement: Placement = PLACEMENT) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    ordered = message.in_order()
    if placement == "alternate":  # the images go to the carrier
        block["content"] = message.text
    elif ordered is not None:  # the server's order of text and images
        block["content"] = [
            {"type": "text", "text": item} if isinstance(item, str) else _image(item, vault)
            for item in ordered
        ]
    elif message.images:
        content: list[dict[str, Any]] = [_image(image, vault) for image in message.images]
        if message.text:
            content.append({"type": "text", "text": message.text})
        block["content"] = content
    else:
        block["content"] = message.text
    if message.is_error:
        block["is_error"] = True
    return block


def carrier_blocks(message: ToolResultMessage, vault: ImageVault) -> list[dict[str, Any]]:
    """The alternate carrier's blocks for one result: its caption, then its images."""
    blocks = [{"type": "text", "text": message.caption}] if message.caption else []
    blocks.extend(_image(image, vault) for image in message.images)
    return blocks


def _messages(messages: list[Message], vault: ImageVault,
              placement: Placement) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # the open user message of tool results
    for message in with_carriers(messages, placement, lambda m: carrier_blocks(m, vault)):
        match message:
            case ToolResultMessage():
                if results is None:
                    results = []
                    out.append({"role": "user", "content": results})
                results.append(tool_result_block(message, vault, placement))
                continue
            case Carrier():
                out.append({"role": "user", "content": message.parts})
            case SystemMessage():
                continue  # all system text goes to the top-level `system`
            case UserMessage():
                out.append({"role": "user", "content": message.text})
            case AssistantMessage():
                content: list[dict[str, Any]] = []
                if message.text:
                    content.append({"type": "text", "text": message.text})
                content.extend(
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                    for c in message.tool_calls
                )
                out.append({"role": "assistant", "content": content})
            case _:
                assert_never(message)
        results = None
    return out


def message_body(request: ChatRequest, vault: ImageVault, *, stream: bool = False,
                 ) -> dict[str, Any]:
    """The Messages body, which Vertex AI's `rawPredict` takes too (`vertex.py`)."""
    placement = placement_of(NAME, request, PLACEMENT, PLACEMENTS)
    params = PARAMETERS.for_model(request.model)
    body: dict[str, Any] = {"model": request.model}
    limit = params.limit(request.max_tokens)
    if limit is not None:
        body[params.max_tokens] = limit
    system = "\n\n".join(system_texts(request))
    if system:
        body["system"] = system
    body["messages"] = _messages(request.messages, vault, placement)
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
    if request.temperature is not None and params.takes("temperature"):
        body["temperature"] = request.temperature
    if stream:
        body["stream"] = True
    return body


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
           stream: bool = False) -> HttpRequest:
    body = message_body(request, vault, stream=stream)
    headers = {
        "content-type": "application/json",
        "anthropic-version": API_VERSION,
        **endpoint.auth("x-api-key"),
    }
    if stream:
        headers["accept"] = EVENT_STREAM
    return HttpRequest(url=endpoint.url("/v1/messages"), headers=headers, body=JSON.encode(body))


def encode_stream(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    """The same request with `"stream": true`: the answer comes as server-sent events."""
    return encode(request, vault, endpoint, stream=True)


class _Block(msgspec.Struct, frozen=True):
    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] = {}


class _Usage(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _Response(msgspec.Struct, frozen=True):
    content: list[_Block]
    model: str = ""
    stop_reason: str | None = None
    usage: _Usage = _Usage()


_STOPS = {"end_turn": "end_turn", "stop_sequence": "end_turn", "tool_use": "tool_use",
          "max_tokens": "max_tokens", "refusal": "content_filter"}


def decode(body: bytes) -> ChatResponse:
    return _chat_response(decode_json(NAME, body, _Response))


def _chat_response(data: _Response) -> ChatResponse:
    u = data.usage
    cache_read, cache_write = u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0
    return ChatResponse(
        text="".join(b.text for b in data.content if b.type == "text"),
        tool_calls=[
            ToolCall(id=b.id, name=b.name, arguments=b.input)
            for b in data.content if b.type == "tool_use"
        ],
        usage=Usage(  # Anthropic's input_tokens leaves out the cached parts: add them
            input_tokens=u.input_tokens + cache_read + cache_write, output_tokens=u.output_tokens,
            cache_read_tokens=cache_read, cache_write_tokens=cache_write,
        ),
        stop_reason=_STOPS.get(data.stop_reason or "", data.stop_reason or "other"),
        raw_model=data.model,
    )


def classify(status: int, body: bytes) -> WireError:
    return classify_status(NAME, status, body, code_from="type")


# --- streaming (`"stream": true`) --------------------------------------------------------------

# The status each error type stands for outside a stream (Anthropic's table of error types).
_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                 "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                 "rate_limit_error": 429, "api_error": 500, "timeout_error": 504,
                 "overloaded_error": 529}


class _Delta(msgspec.Struct, frozen=True):
    type: str = ""
    text: str = ""
    partial_json: str = ""
    stop_reason: str | None = None


class _DeltaUsage(msgspec.Struct, frozen=True):
    """Cumulative totals; a count left out keeps the value `message_start` gave."""

    output_tokens: int | None = None
    input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _Started(msgspec.Struct, frozen=True):
    model: str = ""
    usage: _Usage = _Usage()
    stop_reason: str | None = None


class _ErrorDetail(msgspec.Struct, frozen=True):
    type: str = ""
    message: str = ""


class _Event(msgspec.Struct, frozen=True):
    type: str
    index: int = 0
    message: _Started | None = None
    content_block: _Block | None = None
    delta: _Delta | None = None
    usage: _DeltaUsage | None = None
    error: _ErrorDetail | None = None


class StreamAccumulator:
    """Anthropic's event stream: `message_start`, per content block `content_block_start`,
    `content_block_delta` (`text_delta`, `input_json_delta`, …) and `content_block_stop`, then
    `message_delta` (stop reason, cumulative usage) and `message_stop`; `ping` anywhere, and
    `error` when the stream fails."""

    def __init__(self) -> None:
        self._started: _Started | None = None
        self._blocks: dict[int, _Block] = {}
        self._texts: dict[int, list[str]] = {}
        self._json: dict[int, list[str]] = {}
        self._stop_reason: str | None = None
        self._usage: dict[str, int] = {}
        self._stopped = False

    def feed(self, event: str, data: str) -> str:
        if event == "ping" or self._stopped:
            return ""
        parsed = decode_event(NAME, data, _Event)
        if event == "error" or parsed.type == "error":
            detail = parsed.error or _ErrorDetail()
            raise stream_error(NAME, classify, _ERROR_STATUS.get(detail.type, 500),
                               {"type": "error", "error": {"type": detail.type,
                                                           "message": detail.message}})
        if parsed.type == "message_start" and parsed.message is not None:
            self._started = parsed.message
        elif parsed.type == "content_block_start" and parsed.content_block is not None:
            self._blocks[parsed.index] = parsed.content_block
            self._texts[parsed.index] = [parsed.content_block.text]
            self._json[parsed.index] = []
        elif parsed.type == "content_block_delta" and parsed.delta is not None:
            block = self._blocks.get(parsed.index)
            if block is None:
                raise WireGarbage(wire=NAME, status=None, error_class="garbage",
                                  message=f"a delta for content block {parsed.index}, "
                                          "which never started")
            if parsed.delta.type == "text_delta" and block.type == "text":
                self._texts[parsed.index].append(parsed.delta.text)
                return parsed.delta.text
            if parsed.delta.type == "input_json_delta":
                self._json[parsed.index].append(parsed.delta.partial_json)
        elif parsed.type == "message_delta":
            if parsed.delta is not None and parsed.delta.stop_reason is not None:
                self._stop_reason = parsed.delta.stop_reason
            if parsed.usage is not None:
                self._usage.update((k, v) for k, v in msgspec.structs.asdict(parsed.usage).items()
                                   if v is not None)
        elif parsed.type == "message_stop":
            self._stopped = True
        return ""

    def finish(self) -> ChatResponse:
        if not self._stopped or self._started is None:
            raise stream_cut(NAME, "message_stop")
        started = self._started
        usage = msgspec.structs.replace(started.usage, **self._usage)
        content = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block.type == "text":
                block = msgspec.structs.replace(block, text="".join(self._texts[index]))
            elif block.type == "tool_use" and "".join(self._json[index]).strip():
                arguments = tool_arguments(NAME, "".join(self._json[index]))
                block = msgspec.structs.replace(block, input=arguments)
            content.append(block)
        return _chat_response(_Response(content=content, model=started.model,
                                        stop_reason=self._stop_reason or started.stop_reason,
                                        usage=usage))
