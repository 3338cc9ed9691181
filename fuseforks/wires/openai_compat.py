"""OpenAI Chat Completions (`POST {base}/chat/completions`), for any compatible base URL.

Placement: alternate. Some compatible endpoints refuse `image_url` inside `role:"tool"` (Gemini's
answered 400 when measured), so every tool message carries text only and, after the *run* of
consecutive tool results, one `role:"user"` carrier holds each result's caption then its images.
The carrier never splits the run: tool messages must directly follow the assistant's calls. No
native placement: OpenAI itself refuses images in a tool message ("Image URLs are only allowed for
messages with role 'user'").

Parameters are `parameters.OPENAI_CHAT`: no output-token limit unless the request sets one, then
`max_completion_tokens` for OpenAI's reasoning families (which refuse `max_tokens` and
`temperature`) and `max_tokens` for every other model, as compatible endpoints expect.
"""

from __future__ import annotations

from typing import Any, assert_never

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from fuseforks.core.errors import WireError
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.wires import parameters
from fuseforks.wires.base import (
    JSON,
    Carrier,
    Endpoint,
    HttpRequest,
    arguments_json,
    decode_json,
    placement_of,
    tool_arguments,
    with_carriers,
)
from fuseforks.wires.errors import classify_status
from fuseforks.wires.streaming import (
    EVENT_STREAM,
    decode_event,
    error_status,
    stream_cut,
    stream_error,
)

NAME: WireName = "openai-compat"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_ENVS = ("OPENAI_API_KEY",)
PLACEMENT: Placement = "alternate"  # tests/wires/test_placement.py checks it against the encoding
PLACEMENTS: tuple[Placement, ...] = ("alternate",)
PARAMETERS = parameters.OPENAI_CHAT


def carrier_parts(message: ToolResultMessage, vault: ImageVault) -> list[dict[str, Any]]:
    """The carrier's parts for one result: its caption (if the turn layer wrote one), then its
    images as data URLs."""
    parts: list[dict[str, Any]] = []
    if message.caption:
        parts.append({"type": "text", "text": message.caption})
    parts.extend(
        {"type": "image_url", "image_url": {"url": vault.json_data_url(i.digest, i.media_type)}}
        for i in message.images
    )
    return parts


def _messages(request: ChatRequest, vault: ImageVault) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in with_carriers(request.messages, PLACEMENT, lambda m: carrier_parts(m, vault)):
        match message:
            case ToolResultMessage():
                out.append(
                    {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text}
                )
            case Carrier():
                out.append({"role": "user", "content": message.parts})
            case SystemMessage():
                out.append({"role": "system", "content": message.text})
            case UserMessage():
                out.append({"role": "user", "content": message.text})
            case AssistantMessage():
                entry: dict[str, Any] = {"role": "assistant"}
                if message.tool_calls:
                    entry["content"] = message.text or None
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": arguments_json(c.arguments)},
                        }
                        for c in message.tool_calls
                    ]
                else:
                    entry["content"] = message.text
                out.append(entry)
            case _:
                assert_never(message)
    return out


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
           stream: bool = False) -> HttpRequest:
    placement_of(NAME, request, PLACEMENT, PLACEMENTS)
    params = PARAMETERS.for_model(request.model)
    body: dict[str, Any] = {"model": request.model, "messages": _messages(request, vault)}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    limit = params.limit(request.max_tokens)
    if limit is not None:
        body[params.max_tokens] = limit
    if request.temperature is not None and params.takes("temperature"):
        body["temperature"] = request.temperature
    headers = {"content-type": "application/json", **endpoint.auth("authorization", "Bearer ")}
    if stream:  # usage comes in one more chunk, after the last choice, only when asked for
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        headers["accept"] = EVENT_STREAM
    return HttpRequest(url=endpoint.url("/chat/completions"), headers=headers, body=JSON.encode(body))


def encode_stream(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    """The same request with `"stream": true` and `stream_options.include_usage`."""
    return encode(request, vault, endpoint, stream=True)


class _Function(msgspec.Struct, frozen=True):
    name: str
    arguments: str = ""


class _ToolCall(msgspec.Struct, frozen=True):
    id: str
    function: _Function


class _Message(msgspec.Struct, frozen=True):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(msgspec.Struct, frozen=True):
    message: _Message
    finish_reason: str | None = None


class _Details(msgspec.Struct, frozen=True):
    cached_tokens: int | None = None


class _Usage(msgspec.Struct, frozen=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_details: _Details | None = None


class _Response(msgspec.Struct, frozen=True):
    choices: list[_Choice]
    model: str = ""
    usage: _Usage = _Usage()


_STOPS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
          "length": "max_tokens", "content_filter": "content_filter"}


def decode(body: bytes) -> ChatResponse:
    return _chat_response(decode_json(NAME, body, _Response))


def _chat_response(data: _Response) -> ChatResponse:
    if not data.choices:
        return ChatResponse(text="", tool_calls=[], usage=Usage(), stop_reason="other",
                            raw_model=data.model)
    choice = data.choices[0]
    cached = (data.usage.prompt_tokens_details and data.usage.prompt_tokens_details.cached_tokens) or 0
    return ChatResponse(
        text=choice.message.content or "",
        tool_calls=[
            ToolCall(id=c.id, name=c.function.name, arguments=tool_arguments(NAME, c.function.arguments))
            for c in choice.message.tool_calls or []
        ],
        usage=Usage(
            input_tokens=data.usage.prompt_tokens, output_tokens=data.usage.completion_tokens,
            cache_read_tokens=cached,
        ),
        stop_reason=_STOPS.get(choice.finish_reason or "", choice.finish_reason or "other"),
        raw_model=data.model,
    )


def classify(status: int, body: bytes) -> WireError:
    return classify_status(NAME, status, body)


# --- streaming (`"stream": true`) --------------------------------------------------------------

class _FunctionDelta(msgspec.Struct, frozen=True):
    name: str | None = None
    arguments: str | None = None


class _ToolCallDelta(msgspec.Struct, frozen=True):
    index: int = 0
    id: str | None = None
    function: _FunctionDelta | None = None


class _MessageDelta(msgspec.Struct, frozen=True):
    content: str | None = None
    tool_calls: list[_ToolCallDelta] | None = None


class _ChoiceDelta(msgspec.Struct, frozen=True):
    index: int = 0
    delta: _MessageDelta | None = None
    finish_reason: str | None = None


class _ChunkError(msgspec.Struct, frozen=True):
    message: str = ""
    type: str | None = None
    code: str | int | None = None
    param: str | None = None


class _Chunk(msgspec.Struct, frozen=True):
    choices: list[_ChoiceDelta] | None = None
    model: str | None = None
    usage: _Usage | None = None
    error: _ChunkError | None = None


class _PendingCall:
    __slots__ = ("arguments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class StreamAccumulator:
    """Chat Completions chunks: `data: {chunk}` frames, each choice's `delta` adding content and
    tool-call pieces (merged by `index`: the id and name once, the arguments in pieces), the
    `finish_reason` on the last choice chunk, usage in a chunk of its own with no choices
    (`stream_options.include_usage`), then `data: [DONE]`. An `{"error": …}` chunk fails it."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}
        self._finish: str | None = None
        self._model = ""
        self._usage: _Usage | None = None
        self._choice = False
        self._done = False

    def feed(self, event: str, data: str) -> str:
        if self._done:
            return ""
        if data.strip() == "[DONE]":
            self._done = True
            return ""
        chunk = decode_event(NAME, data, _Chunk)
        if chunk.error is not None or event == "error":
            error = chunk.error or _ChunkError()
            code = "" if error.code is None else str(error.code)
            status = error.code if isinstance(error.code, int) and error.code >= 400 else \
                error_status(error.type, code)
            raise stream_error(NAME, classify, status, {"error": msgspec.structs.asdict(error)})
        self._model = chunk.model or self._model
        if chunk.usage is not None:
            self._usage = chunk.usage
        text = ""
        for choice in chunk.choices or []:
            if choice.index != 0:
                continue  # the non-streaming decoder reads the first choice only
            self._choice = True
            delta = choice.delta or _MessageDelta()
            if delta.content:
                text = delta.content
                self._text.append(text)
            for piece in delta.tool_calls or []:
                call = self._calls.setdefault(piece.index, _PendingCall())
                call.id = call.id or piece.id or ""
                if piece.function is not None:
                    call.name = call.name or piece.function.name or ""
                    if piece.function.arguments:
                        call.arguments.append(piece.function.arguments)
            if choice.finish_reason is not None:
                self._finish = choice.finish_reason
        return text

    def finish(self) -> ChatResponse:
        if not self._done:
            raise stream_cut(NAME, "data: [DONE]")
        choices = []
        if self._choice:
            calls = [_ToolCall(id=c.id, function=_Function(name=c.name,
                                                           arguments="".join(c.arguments)))
                     for _, c in sorted(self._calls.items())]
            message = _Message(content="".join(self._text) or None, tool_calls=calls or None)
            choices.append(_Choice(message=message, finish_reason=self._finish))
        return _chat_response(_Response(choices=choices, model=self._model,
                                        usage=self._usage or _Usage()))
