"""The Responses format (`POST {base}/responses`), shared by four wires.

OpenAI, xAI, Meta and Perplexity accept the same request body, so it is encoded once here and the
four wires differ only in name, base URL and key variable (`registry.py`). Placement: native by
default. A tool result with images becomes `function_call_output.output` = `input_text` **then**
one `input_image` per image; without images `output` stays the plain string. Alternate
(`ChatRequest.placement`, for endpoints that take no images in a tool output): every `output` is
the plain string, and one user message after the run of outputs holds, per result with images,
its caption as `input_text` then its `input_image` parts.

Parameters are `parameters.RESPONSES`: `max_output_tokens` only when the request sets a limit; no
`temperature` for OpenAI's reasoning families.
"""

from __future__ import annotations

from functools import partial
from typing import Any, assert_never

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ImageRef,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    system_texts,
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

PLACEMENT: Placement = "native"  # tests/wires/test_placement.py checks it against the encoding
PLACEMENTS: tuple[Placement, ...] = ("native", "alternate")
PARAMETERS = parameters.RESPONSES


def _image(image: ImageRef, vault: ImageVault) -> dict[str, Any]:
    return {"type": "input_image", "image_url": vault.json_data_url(image.digest, image.media_type)}


def function_call_output(message: ToolResultMessage, vault: ImageVault,
                         placement: Placement = PLACEMENT) -> dict[str, Any]:
    output: str | list[dict[str, Any]] = message.text
    ordered = message.in_order()
    if placement == "alternate":  # the images go to the carrier: `output` is the text
        ordered = None
        images: list[ImageRef] = []
    else:
        images = message.images
    if ordered is not None:  # the server's order of text and images
        output = [
            {"type": "input_text", "text": item} if isinstance(item, str) else _image(item, vault)
            for item in ordered
        ]
    elif images:
        parts: list[dict[str, Any]] = [{"type": "input_text", "text": message.text}] if message.text else []
        parts.extend(_image(i, vault) for i in images)
        output = parts
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


def carrier_parts(message: ToolResultMessage, vault: ImageVault) -> list[dict[str, Any]]:
    """The alternate carrier's parts for one result: its caption, then its images. An image in
    a message's content must say its `detail` (the SDK's `ResponseInputImageParam` requires it;
    in a tool output it is optional): `auto`, the default the provider would apply."""
    parts = [{"type": "input_text", "text": message.caption}] if message.caption else []
    parts.extend(_image(i, vault) | {"detail": "auto"} for i in message.images)
    return parts


def _input(request: ChatRequest, vault: ImageVault, placement: Placement) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in with_carriers(request.messages, placement,
                                 lambda m: carrier_parts(m, vault)):
        match message:
            case ToolResultMessage():
                items.append(function_call_output(message, vault, placement))
            case Carrier():
                items.append({"role": "user", "content": message.parts})
            case SystemMessage():
                continue  # joined into `instructions`
            case UserMessage():
                items.append({"role": "user", "content": message.text})
            case AssistantMessage():
                if message.text:
                    items.append({"role": "assistant", "content": message.text})
                items.extend(
                    {
                        "type": "function_call",
                        "call_id": c.id,
                        "name": c.name,
                        "arguments": arguments_json(c.arguments),
                    }
                    for c in message.tool_calls
                )
            case _:
                assert_never(message)
    return items


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
           stream: bool = False) -> HttpRequest:
    placement = placement_of("the Responses format", request, PLACEMENT, PLACEMENTS)
    params = PARAMETERS.for_model(request.model)
    body: dict[str, Any] = {"model": request.model, "input": _input(request, vault, placement)}
    system = "\n\n".join(system_texts(request))
    if system:
        body["instructions"] = system
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
                "strict": False,
            }
            for t in request.tools
        ]
    limit = params.limit(request.max_tokens)
    if limit is not None:
        body[params.max_tokens] = limit
    if request.temperature is not None and params.takes("temperature"):
        body["temperature"] = request.temperature
    headers = {"content-type": "application/json", **endpoint.auth("authorization", "Bearer ")}
    if stream:
        body["stream"] = True
        headers["accept"] = EVENT_STREAM
    return HttpRequest(url=endpoint.url("/responses"), headers=headers, body=JSON.encode(body))


def encode_stream(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    """The same request with `"stream": true`: the answer comes as Responses events."""
    return encode(request, vault, endpoint, stream=True)


class _Content(msgspec.Struct, frozen=True):
    type: str
    text: str = ""


class _Item(msgspec.Struct, frozen=True):
    type: str
    content: list[_Content] = []
    call_id: str = ""
    name: str = ""
    arguments: str = ""


class _InputDetails(msgspec.Struct, frozen=True):
    cached_tokens: int = 0


class _Usage(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0
    input_tokens_details: _InputDetails | None = None


class _Incomplete(msgspec.Struct, frozen=True):
    reason: str = ""


class _Response(msgspec.Struct, frozen=True):
    output: list[_Item]
    model: str = ""
    status: str = "completed"
    incomplete_details: _Incomplete | None = None
    usage: _Usage | None = None


def decode_for(wire: WireName, body: bytes) -> ChatResponse:
    data = decode_json(wire, body, _Response)
    text = "".join(
        c.text for item in data.output if item.type == "message"
        for c in item.content if c.type == "output_text"
    )
    calls = [
        ToolCall(id=item.call_id, name=item.name, arguments=tool_arguments(wire, item.arguments))
        for item in data.output if item.type == "function_call"
    ]
    if calls:
        stop = "tool_use"
    elif data.status == "incomplete":
        reason = data.incomplete_details.reason if data.incomplete_details else ""
        stop = "max_tokens" if reason == "max_output_tokens" else (
            "content_filter" if reason == "content_filter" else reason or "incomplete")
    else:
        stop = "end_turn"
    usage = data.usage or _Usage()
    return ChatResponse(
        text=text,
        tool_calls=calls,
        usage=Usage(
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cache_read_tokens=usage.input_tokens_details.cached_tokens if usage.input_tokens_details else 0,
        ),
        stop_reason=stop,
        raw_model=data.model,
    )


def classify_for(wire: WireName, status: int, body: bytes) -> WireError:
    return classify_status(wire, status, body)


# --- streaming (`"stream": true`) --------------------------------------------------------------

class _EventError(msgspec.Struct, frozen=True):
    code: str | None = None
    message: str = ""
    param: str | None = None


class _Failed(msgspec.Struct, frozen=True):
    error: _EventError | None = None


class _Event(msgspec.Struct, frozen=True):
    type: str = ""
    output_index: int = 0
    content_index: int = 0
    delta: str = ""
    item: dict[str, Any] | None = None
    part: dict[str, Any] | None = None
    response: msgspec.Raw = msgspec.Raw()
    # an `error` event's own fields
    code: str | None = None
    message: str = ""
    param: str | None = None


_TERMINAL = frozenset({"response.completed", "response.incomplete"})


class StreamAccumulator:
    """The Responses events: `response.created`, each output item's `response.output_item.added`,
    its `response.output_text.delta` or `response.function_call_arguments.delta` pieces and
    `response.output_item.done`, then `response.completed` (or `response.incomplete`) with the
    whole response, which the non-streaming decoder reads — its output taken from the items
    streamed when a server leaves it empty. `response.failed` and `error` fail it."""

    def __init__(self, wire: WireName) -> None:
        self.wire = wire
        self._items: dict[int, dict[str, Any]] = {}
        self._final: bytes | None = None

    def feed(self, event: str, data: str) -> str:
        if self._final is not None:
            return ""
        parsed = decode_event(self.wire, data, _Event)
        kind = parsed.type or event
        if kind == "response.output_text.delta":
            item = self._items.get(parsed.output_index)
            content = item.get("content") if item is not None else None
            if isinstance(content, list) and parsed.content_index < len(content):
                part = content[parsed.content_index]
                if isinstance(part, dict):
                    part["text"] = str(part.get("text", "")) + parsed.delta
            return parsed.delta
        if kind == "response.function_call_arguments.delta":
            item = self._items.get(parsed.output_index)
            if item is not None:
                item["arguments"] = str(item.get("arguments", "")) + parsed.delta
        elif kind in ("response.output_item.added", "response.output_item.done"):
            if parsed.item is not None:
                self._items[parsed.output_index] = parsed.item
        elif kind == "response.content_part.added":
            item = self._items.get(parsed.output_index)
            if item is not None and isinstance(item.get("content"), list) and parsed.part:
                item["content"].append(parsed.part)
        elif kind in _TERMINAL and parsed.response:
            self._final = bytes(parsed.response)
        elif kind == "response.failed":
            failed = decode_event(self.wire, bytes(parsed.response).decode() or "{}", _Failed)
            self._raise(failed.error or _EventError())
        elif kind == "error" or event == "error":
            self._raise(_EventError(code=parsed.code, message=parsed.message, param=parsed.param))
        return ""

    def _raise(self, error: _EventError) -> None:
        body = {"error": {"message": error.message, "type": None, "param": error.param,
                          "code": error.code}}
        raise stream_error(self.wire, partial(classify_for, self.wire),
                           error_status(error.code), body)

    def finish(self) -> ChatResponse:
        if self._final is None:
            raise stream_cut(self.wire, "response.completed")
        response = decode_for(self.wire, self._final)
        if response.text or response.tool_calls or not self._items:
            return response
        whole = msgspec.json.decode(self._final)  # a server that left `output` empty
        whole["output"] = [self._items[i] for i in sorted(self._items)]
        return decode_for(self.wire, JSON.encode(whole))
