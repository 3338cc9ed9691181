"""Simulated Responses endpoint, shared by the four Responses wires (errors differ by wire)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from fuseforks.simulator import streams
from fuseforks.simulator.brain import (
    TOOL_OUTPUT_IMAGE_REFUSING_MODELS,
    Answer,
    CallTools,
    Conversation,
    RefuseImages,
    Script,
    decide,
)
from fuseforks.simulator.media import decode_data_url
from fuseforks.simulator.shapes import Invalid, Reply, Streamed, convert, json_reply


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class InputText(_Strict, tag="input_text", tag_field="type"):
    text: str


class InputImage(_Strict, tag="input_image", tag_field="type"):
    """An image in a tool output (`ResponseInputImageContentParam`: `detail` optional)."""

    image_url: str
    detail: Literal["auto", "low", "high", "original"] | None = None


class MessageImage(_Strict, tag="input_image", tag_field="type"):
    """An image in a message's content (`ResponseInputImageParam`: `detail` required)."""

    image_url: str
    detail: Literal["auto", "low", "high", "original"]


class OutputText(_Strict, tag="output_text", tag_field="type"):
    text: str
    annotations: list[Any] = []


class MessageItem(_Strict):
    role: Literal["user", "assistant", "system", "developer"]
    content: str | list[InputText | MessageImage | OutputText]
    type: Literal["message"] = "message"


class FunctionCallItem(_Strict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str
    id: str | None = None
    status: str | None = None


class FunctionCallOutputItem(_Strict):
    type: Literal["function_call_output"]
    call_id: str
    output: str | list[InputText | InputImage]


class FunctionTool(_Strict):
    type: Literal["function"]
    name: str
    parameters: dict[str, Any] | None = None
    description: str | None = None
    strict: bool | None = None


# Every field of the `openai` SDK's `ResponseCreateParams` (its streaming and non-streaming
# TypedDicts; tests/simulator/test_sdk_clients.py checks this against `typing.get_type_hints`).
RESPONSE_CREATE_FIELDS = frozenset({
    "access_programs", "background", "background_options", "context_management", "conversation",
    "image", "include", "input", "instructions", "max_output_tokens", "max_tool_calls",
    "metadata", "model", "moderation", "parallel_tool_calls", "previous_response_id", "prompt",
    "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning",
    "safety_identifier", "service_tier", "store", "stream", "stream_options", "temperature",
    "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user",
})


class Request(_Strict):
    """The fields the simulated model reads, strictly; the other declared fields are checked by
    name only (`_refuse_unknown_parameters`) and left out before this conversion."""

    model: str
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    tools: list[FunctionTool] = []
    max_output_tokens: int | None = None
    temperature: float | None = None
    tool_choice: str | dict[str, Any] | None = None
    store: bool | None = None
    stream: bool = False


_READ_FIELDS = frozenset(Request.__struct_fields__)


def _refuse_unknown_parameters(payload: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's refusal of the first field `ResponseCreateParams` does not declare; the fields the
    model reads, for the strict conversion."""
    for name in payload:
        if name not in RESPONSE_CREATE_FIELDS:
            raise Invalid(f"Unknown parameter: '{name}'.", code="unknown_parameter", param=name)
    return {k: v for k, v in payload.items() if k in _READ_FIELDS}


_ITEMS: dict[str, type] = {"message": MessageItem, "function_call": FunctionCallItem,
                           "function_call_output": FunctionCallOutputItem}


def _images(parts: object, where: str) -> list[bytes]:
    if not isinstance(parts, list):
        return []
    return [decode_data_url(p.image_url, where) for p in parts
            if isinstance(p, InputImage | MessageImage)]


def _item(raw: object, n: int) -> object:
    if not isinstance(raw, dict):
        raise Invalid(f"input[{n}]: expected an object")
    kind = raw.get("type", "message")
    if kind not in _ITEMS:
        raise Invalid(f"input[{n}]: unsupported input item type {kind!r}")
    return convert(raw, _ITEMS[kind], f"input[{n}]")


def _read(request: Request) -> tuple[Conversation, list[object]]:
    raw_items = [{"role": "user", "content": request.input}] if isinstance(request.input, str) \
        else request.input
    items = [_item(raw, n) for n, raw in enumerate(raw_items)]
    rounds = 0
    seen: list[bytes] = []
    latest: list[bytes] = []
    called: set[str] = set()
    answered: set[str] = set()
    previous: object = None
    for n, item in enumerate(items):
        where = f"input[{n}]"
        if isinstance(item, FunctionCallItem):
            if not isinstance(previous, FunctionCallItem):
                latest = []
                rounds += 1
            called.add(item.call_id)
        elif isinstance(item, FunctionCallOutputItem):
            if item.call_id not in called:
                raise Invalid(f"No tool call found for function call output with call_id "
                              f"{item.call_id}.")
            answered.add(item.call_id)
            found = _images(item.output, where)
            latest += found
            seen += found
        elif isinstance(item, MessageItem):
            if item.role == "assistant":
                latest = []
            elif isinstance(item.content, list):
                if item.role != "user" and any(isinstance(p, MessageImage) for p in item.content):
                    raise Invalid(f"{where}: images are only accepted in user messages")
                found = _images(item.content, where)
                latest += found
                seen += found
        previous = item
    missing = called - answered
    if missing:
        raise Invalid(f"No tool output found for function call {min(missing)}.")
    conversation = Conversation(model=request.model, tools=[t.name for t in request.tools],
                                tool_rounds_done=rounds,
                                answering_tool_round=_answering_tool_round(items),
                                latest_images=latest, all_images=seen)
    return conversation, items


def _answering_tool_round(items: list[object]) -> bool:
    """The latest assistant item is a function call (its output follows: checked above)."""
    last = next((i for i in reversed(items) if isinstance(i, FunctionCallItem) or (
        isinstance(i, MessageItem) and i.role == "assistant")), None)
    return isinstance(last, FunctionCallItem)

def _refuse_tool_output_arrays(model: str, items: list[object]) -> None:
    """A model that takes only a string as a tool output answers OpenAI's type refusal of the
    first output that is not one."""
    if model not in TOOL_OUTPUT_IMAGE_REFUSING_MODELS:
        return
    for n, item in enumerate(items):
        if isinstance(item, FunctionCallOutputItem) and isinstance(item.output, list):
            raise Invalid(f"Invalid type for 'input[{n}].output': expected a string, but got an "
                          "array instead.", code="invalid_type", param=f"input[{n}].output")


def handle(payload: dict[str, Any], seq: int, script: Script) -> Reply | Streamed:
    request = convert(_refuse_unknown_parameters(payload), Request, "body")
    assert isinstance(request, Request)
    conversation, items = _read(request)
    _refuse_tool_output_arrays(request.model, items)
    decision = decide(conversation, script)
    if isinstance(decision, RefuseImages):
        raise Invalid(decision.message, code=decision.code)
    output: list[dict[str, Any]]
    if isinstance(decision, CallTools):
        output = [{"type": "function_call", "id": f"fc_{seq:04d}_{i}",
                   "call_id": f"call_{seq:04d}_{i}", "name": name, "arguments": decision.arguments,
                   "status": "completed"} for i, name in enumerate(decision.names)]
    else:
        assert isinstance(decision, Answer)
        output = [{"type": "message", "id": f"msg_{seq:04d}", "role": "assistant",
                   "status": "completed",
                   "content": [{"type": "output_text", "text": decision.text, "annotations": []}]}]
    response = {
        "id": f"resp_sim{seq:04d}", "object": "response", "created_at": 1_780_000_000,
        "status": "completed", "model": request.model, "output": output,
        "usage": {"input_tokens": 100 + seq, "output_tokens": 10, "total_tokens": 110 + seq,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }
    return streams.responses(response) if request.stream else json_reply(response)
