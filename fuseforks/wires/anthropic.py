"""Anthropic Messages (`POST /v1/messages`).

Placement: native. A tool result with images becomes `tool_result.content` = the image blocks
**then** the text block (the order measured against the live API); without images `content` stays
the plain string. Consecutive tool results share one user message, as the API requires.
`ChatRequest.temperature` is not sent (the current API has no such parameter).
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
from fuseforks.wires.base import JSON, Endpoint, HttpRequest, decode_json
from fuseforks.wires.errors import classify_status

NAME: WireName = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
KEY_ENVS = ("ANTHROPIC_API_KEY",)
PLACEMENT: Placement = "native"  # tests/wires/test_placement.py checks it against the encoding
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


def tool_result_block(message: ToolResultMessage, vault: ImageVault) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    ordered = message.in_order()
    if ordered is not None:  # the server's order of text and images
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


def _messages(messages: list[Message], vault: ImageVault) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # the open user message of tool results
    for message in messages:
        match message:
            case ToolResultMessage():
                if results is None:
                    results = []
                    out.append({"role": "user", "content": results})
                results.append(tool_result_block(message, vault))
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
    return out


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    body: dict[str, Any] = {"model": request.model, "max_tokens": request.max_tokens}
    system = "\n\n".join(system_texts(request))
    if system:
        body["system"] = system
    body["messages"] = _messages(request.messages, vault)
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
    # No `temperature`: the current Messages API no longer takes it (absent from the official
    # SDK's MessageCreateParams, which tests/wires/test_sdk_shapes.py validates against).
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
    return ChatResponse(
        text="".join(b.text for b in data.content if b.type == "text"),
        tool_calls=[
            ToolCall(id=b.id, name=b.name, arguments=b.input)
            for b in data.content if b.type == "tool_use"
        ],
        usage=Usage(
            input_tokens=u.input_tokens, output_tokens=u.output_tokens,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
        ),
        stop_reason=_STOPS.get(data.stop_reason or "", data.stop_reason or "other"),
        raw_model=data.model,
    )


def classify(status: int, body: bytes) -> WireError:
    return classify_status(NAME, status, body, code_from="type")
