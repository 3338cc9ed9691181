"""Amazon Bedrock's Converse API (`POST {base}/model/{modelId}/converse`), and its stream.

One body format for every model family Bedrock serves. Placement: native by default — a tool
result with images becomes `toolResult.content` = its text and `image` blocks (`format`, base64
`source.bytes`) in the server's order, or the images then the text — which Bedrock documents for
Anthropic Claude and Amazon Nova only; other families refuse it ("This model doesn't support the
image field for user messages"), and the placement ladder moves the images. Alternate: every
`toolResult` carries its text only, and the same user message goes on, after the results, with
each result's caption as a `text` block then its `image` blocks: Converse refuses two user
messages in a row, so the carrier joins the message that holds the results rather than
following it.

Parameters are `parameters.BEDROCK`: `inferenceConfig.maxTokens` only when the request sets a
limit. Usage: `inputTokens` leaves out `cacheReadInputTokens` and `cacheWriteInputTokens`, so the
three are added. Errors come as `{"message": …}` with their type (`ValidationException`,
`ThrottlingException`, …) in the `x-amzn-ErrorType` header, which `error_body` folds into the body
as `__type` before the body is classified. The stream (`/converse-stream`) is AWS's binary
event-stream framing (`eventstream.py`), not server-sent events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never
from urllib.parse import quote

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
from fuseforks.core.errors import ConfigError, WireError, WireGarbage
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.wires import eventstream, parameters
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
from fuseforks.wires.streaming import decode_event, stream_cut, stream_error

NAME: WireName = "bedrock-converse"
KEY_ENVS = ("AWS_BEARER_TOKEN_BEDROCK",)
REGION_ENVS = ("AWS_REGION", "AWS_DEFAULT_REGION")
PLACEMENT: Placement = "native"  # tests/wires/test_placement.py checks it against the encoding
PLACEMENTS: tuple[Placement, ...] = ("native", "alternate")
PARAMETERS = parameters.BEDROCK
EVENT_STREAM = eventstream.CONTENT_TYPE
ERROR_TYPE_HEADER = "x-amzn-errortype"
SIGNING_NAME = "bedrock"
"""The service name in a Signature Version 4 credential scope (botocore's `signingName`)."""

# Converse's `ImageFormat` enum, lowercase only (a `jpg` or a `JPEG` is a ValidationException).
_FORMATS = {"image/jpeg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}


def base_url(region: str) -> str:
    """Bedrock Runtime's address in `region`."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def region(environ: Mapping[str, str]) -> str | None:
    """The region the environment names (as botocore reads it), if any."""
    return next((environ[v] for v in REGION_ENVS if environ.get(v)), None)


def address(environ: Mapping[str, str], found: str | None = None) -> str:
    """Bedrock Runtime in the environment's region (`found`: the one the credentials' profile
    names); a `ConfigError` names what to set."""
    chosen = region(environ) or found
    if not chosen:
        raise ConfigError("no AWS region for bedrock-converse: set AWS_REGION (or "
                          "AWS_DEFAULT_REGION), or --base-url")
    return base_url(chosen)


def _image(image: ImageRef, vault: ImageVault) -> dict[str, Any]:
    return {"image": {"format": _FORMATS[image.media_type],
                      "source": {"bytes": vault.json_base64(image.digest)}}}


def tool_result_block(message: ToolResultMessage, vault: ImageVault,
                      placement: Placement = PLACEMENT) -> dict[str, Any]:
    content: list[dict[str, Any]]
    ordered = message.in_order()
    if placement == "alternate" or not message.images:
        content = [{"text": message.text}]
    elif ordered is not None:  # the server's order of text and images
        content = [{"text": item} if isinstance(item, str) else _image(item, vault)
                   for item in ordered]
    else:
        content = [_image(image, vault) for image in message.images]
        if message.text:
            content.append({"text": message.text})
    result: dict[str, Any] = {"toolUseId": message.tool_call_id, "content": content}
    if message.is_error:
        result["status"] = "error"
    return {"toolResult": result}


def carrier_blocks(message: ToolResultMessage, vault: ImageVault) -> list[dict[str, Any]]:
    """The alternate carrier's blocks for one result: its caption, then its images."""
    blocks = [{"text": message.caption}] if message.caption else []
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
                if results is not None:  # the same user message goes on after its results
                    results.extend(message.parts)
                    continue
                out.append({"role": "user", "content": message.parts})
            case SystemMessage():
                continue  # all system text goes to the top-level `system`
            case UserMessage():
                out.append({"role": "user", "content": [{"text": message.text}]})
            case AssistantMessage():
                content: list[dict[str, Any]] = []
                if message.text:
                    content.append({"text": message.text})
                content.extend({"toolUse": {"toolUseId": c.id, "name": c.name,
                                            "input": c.arguments}}
                               for c in message.tool_calls)
                out.append({"role": "assistant", "content": content})
            case _:
                assert_never(message)
        results = None
    return out


def body(request: ChatRequest, vault: ImageVault) -> dict[str, Any]:
    """The Converse body: the same for `converse` and `converse-stream`."""
    placement = placement_of(NAME, request, PLACEMENT, PLACEMENTS)
    params = PARAMETERS.for_model(request.model)
    out: dict[str, Any] = {"messages": _messages(request.messages, vault, placement)}
    system = "\n\n".join(system_texts(request))
    if system:
        out["system"] = [{"text": system}]
    config: dict[str, Any] = {}
    limit = params.limit(request.max_tokens)
    if limit is not None:
        config[params.max_tokens] = limit
    if request.temperature is not None and params.takes("temperature"):
        config["temperature"] = request.temperature
    if config:
        out["inferenceConfig"] = config
    if request.tools:
        out["toolConfig"] = {"tools": [
            {"toolSpec": {"name": t.name, "description": t.description or t.name,
                          "inputSchema": {"json": t.input_schema}}}
            for t in request.tools]}
    return out


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
           stream: bool = False) -> HttpRequest:
    """The model id is one path segment (an inference profile's ARN holds `/` and `:`)."""
    operation = "converse-stream" if stream else "converse"
    headers = {"content-type": "application/json", **endpoint.auth("authorization", "Bearer ")}
    if stream:
        headers["accept"] = EVENT_STREAM
    return HttpRequest(url=endpoint.url(f"/model/{quote(request.model, safe='')}/{operation}"),
                       headers=headers, body=JSON.encode(body(request, vault)))


def encode_stream(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    """The same body to `/converse-stream`: the answer comes as event-stream messages."""
    return encode(request, vault, endpoint, stream=True)


class _ToolUse(msgspec.Struct, frozen=True, rename="camel"):
    tool_use_id: str
    name: str
    input: dict[str, Any] = {}


class _Block(msgspec.Struct, frozen=True, rename="camel"):
    text: str | None = None
    tool_use: _ToolUse | None = None


class _Message(msgspec.Struct, frozen=True):
    content: list[_Block] = []
    role: str = "assistant"


class _Output(msgspec.Struct, frozen=True):
    message: _Message = _Message()


class _Usage(msgspec.Struct, frozen=True, rename="camel"):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None


class _Response(msgspec.Struct, frozen=True, rename="camel"):
    output: _Output
    stop_reason: str = ""
    usage: _Usage = _Usage()


_STOPS = {"end_turn": "end_turn", "stop_sequence": "end_turn", "tool_use": "tool_use",
          "max_tokens": "max_tokens", "guardrail_intervened": "content_filter",
          "content_filtered": "content_filter", "model_context_window_exceeded": "max_tokens"}


def decode(body: bytes) -> ChatResponse:
    return _chat_response(decode_json(NAME, body, _Response))


def _chat_response(data: _Response) -> ChatResponse:
    u = data.usage
    cache_read, cache_write = u.cache_read_input_tokens or 0, u.cache_write_input_tokens or 0
    blocks = data.output.message.content
    calls = [ToolCall(id=b.tool_use.tool_use_id, name=b.tool_use.name, arguments=b.tool_use.input)
             for b in blocks if b.tool_use is not None]
    return ChatResponse(
        text="".join(b.text for b in blocks if b.text),
        tool_calls=calls,
        usage=Usage(  # like Anthropic's, Bedrock's inputTokens leaves out the cached parts
            input_tokens=u.input_tokens + cache_read + cache_write, output_tokens=u.output_tokens,
            cache_read_tokens=cache_read, cache_write_tokens=cache_write),
        stop_reason=_STOPS.get(data.stop_reason, data.stop_reason or "other"),
        raw_model="",
    )


def error_body(headers: Mapping[str, str], body: bytes) -> bytes:
    """The error body with its type from `x-amzn-ErrorType` (`ValidationException:http://…`) as
    `__type`, where AWS's JSON bodies put it when they carry it themselves."""
    error_type = headers.get(ERROR_TYPE_HEADER, "").partition(":")[0].strip()
    if not error_type:
        return body
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        data = {"message": body[:200].decode("utf-8", "replace").strip()}
    if not isinstance(data, dict) or data.get("__type"):
        return body
    return JSON.encode({"__type": error_type, **data})


def classify(status: int, body: bytes) -> WireError:
    return classify_status(NAME, status, body, code_from="type")


# --- streaming (`/converse-stream`) -----------------------------------------------------------

# The status each exception of the stream stands for outside it (the Converse API reference).
_EXCEPTION_STATUS = {"validationException": 400, "accessDeniedException": 403,
                     "resourceNotFoundException": 404, "modelTimeoutException": 408,
                     "modelErrorException": 424, "throttlingException": 429,
                     "modelStreamErrorException": 424, "internalServerException": 500,
                     "serviceUnavailableException": 503}


class _Delta(msgspec.Struct, frozen=True, rename="camel"):
    text: str | None = None
    tool_use: dict[str, Any] | None = None


class _Start(msgspec.Struct, frozen=True, rename="camel"):
    tool_use: _ToolUse | None = None


class _StreamEvent(msgspec.Struct, frozen=True, rename="camel"):
    content_block_index: int = 0
    start: _Start | None = None
    delta: _Delta | None = None
    stop_reason: str | None = None
    usage: _Usage | None = None
    message: str = ""


class StreamAccumulator:
    """Converse's stream events, each an event-stream message named by `:event-type`:
    `messageStart`, per content block `contentBlockStart` (a tool use's id and name),
    `contentBlockDelta` (`text`, or a piece of a tool use's `input` JSON) and `contentBlockStop`,
    `messageStop` (the stop reason), then `metadata` (usage) last. An exception message
    (`:message-type` `exception`) fails it as the same error outside a stream would; the HTTP
    edge hands it over as the event `exception:<type>`."""

    def __init__(self) -> None:
        self._texts: dict[int, list[str]] = {}
        self._tools: dict[int, _ToolUse] = {}
        self._json: dict[int, list[str]] = {}
        self._stop: str | None = None
        self._usage: _Usage | None = None

    def feed(self, event: str, data: str) -> str:
        parsed = decode_event(NAME, data or "{}", _StreamEvent)
        if event.startswith("exception:"):
            kind = event.removeprefix("exception:")
            type_name = kind[:1].upper() + kind[1:]
            raise stream_error(NAME, classify, _EXCEPTION_STATUS.get(kind, 500),
                               {"__type": type_name, "message": parsed.message})
        index = parsed.content_block_index
        if event == "contentBlockStart" and parsed.start and parsed.start.tool_use:
            self._tools[index] = parsed.start.tool_use
            self._json[index] = []
        elif event == "contentBlockDelta" and parsed.delta is not None:
            if parsed.delta.text is not None:
                self._texts.setdefault(index, []).append(parsed.delta.text)
                return parsed.delta.text
            if parsed.delta.tool_use is not None:
                if index not in self._tools:
                    raise WireGarbage(wire=NAME, status=None, error_class="garbage",
                                      message=f"a tool use delta for content block {index}, "
                                              "which never started")
                self._json[index].append(str(parsed.delta.tool_use.get("input", "")))
        elif event == "messageStop":
            self._stop = parsed.stop_reason or ""
        elif event == "metadata":
            self._usage = parsed.usage or _Usage()
        return ""

    def finish(self) -> ChatResponse:
        if self._stop is None or self._usage is None:
            raise stream_cut(NAME, "messageStop and metadata")
        blocks: list[_Block] = []
        for index in sorted(self._texts.keys() | self._tools.keys()):
            if index in self._tools:
                tool = self._tools[index]
                raw = "".join(self._json[index])
                blocks.append(_Block(tool_use=msgspec.structs.replace(
                    tool, input=tool_arguments(NAME, raw) if raw.strip() else {})))
            else:
                blocks.append(_Block(text="".join(self._texts[index])))
        return _chat_response(_Response(output=_Output(message=_Message(content=blocks)),
                                        stop_reason=self._stop, usage=self._usage))
