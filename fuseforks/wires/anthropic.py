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
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.ports.errors import WireError
from fuseforks.wires import parameters
from fuseforks.wires.base import JSON, Endpoint, HttpRequest, decode_json, placement_of
from fuseforks.wires.errors import classify_status

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
    carrier: list[dict[str, Any]] = []  # alternate: the images of the run of results
    for message in messages:
        if carrier and not isinstance(message, ToolResultMessage):
            out.append({"role": "user", "content": carrier})
            carrier = []
        match message:
            case ToolResultMessage():
                if results is None:
                    results = []
                    out.append({"role": "user", "content": results})
                results.append(tool_result_block(message, vault, placement))
                if placement == "alternate" and message.images:
                    carrier.extend(carrier_blocks(message, vault))
                continue
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
    if carrier:
        out.append({"role": "user", "content": carrier})
    return out


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
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
    headers = {
        "content-type": "application/json",
        "anthropic-version": API_VERSION,
        **endpoint.auth("x-api-key"),
    }
    return HttpRequest(url=endpoint.url("/v1/messages"), headers=headers, body=JSON.encode(body))


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
    data = decode_json(NAME, body, _Response)
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
