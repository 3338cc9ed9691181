"""Simulated Anthropic Messages endpoint: strict request checks, scripted replies."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from fuseforks.simulator import streams
from fuseforks.simulator.brain import Answer, CallTools, Conversation, RefuseImages, Script, decide
from fuseforks.simulator.media import decode_image
from fuseforks.simulator.shapes import Invalid, Reply, Streamed, convert, json_reply

WIRE = "anthropic"


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class Source(_Strict):
    type: Literal["base64"]
    media_type: str
    data: str


class TextBlock(_Strict, tag="text", tag_field="type"):
    text: str


class ImageBlock(_Strict, tag="image", tag_field="type"):
    source: Source


class ToolUseBlock(_Strict, tag="tool_use", tag_field="type"):
    id: str
    name: str
    input: dict[str, Any]
    caller: dict[str, Any] | None = None  # what the SDK echoes back from a response's block
    toolset_name: str | None = None


class ToolResultBlock(_Strict, tag="tool_result", tag_field="type"):
    tool_use_id: str
    content: str | list[TextBlock | ImageBlock] = ""
    is_error: bool = False


class Message(_Strict):
    role: Literal["user", "assistant"]
    content: str | list[TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock]


class Tool(_Strict):
    """The SDK's `ToolParam`: a client tool, `type` "custom" or left out."""

    name: str
    input_schema: dict[str, Any]
    description: str = ""
    type: Literal["custom"] | None = None
    cache_control: dict[str, Any] | None = None
    strict: bool | None = None
    input_examples: list[dict[str, Any]] | None = None
    eager_input_streaming: bool | None = None
    defer_loading: bool | None = None
    allowed_callers: list[str] | None = None


class Request(_Strict):
    model: str
    max_tokens: int
    messages: list[Message]
    system: str | list[TextBlock] | None = None
    tools: list[Tool] = []
    tool_choice: dict[str, Any] | None = None
    stream: bool = False


def _blocks(message: Message) -> list[Any]:
    return message.content if isinstance(message.content, list) else []


def _read(request: Request) -> Conversation:
    if not request.messages or request.messages[0].role != "user":
        raise Invalid("messages: first message must use the \"user\" role")
    if request.max_tokens < 1:
        raise Invalid("max_tokens: must be at least 1")
    rounds = 0
    seen: list[bytes] = []
    latest: list[bytes] = []
    open_calls: set[str] = set()
    for n, message in enumerate(request.messages):
        where = f"messages.{n}"
        results = {b.tool_use_id for b in _blocks(message) if isinstance(b, ToolResultBlock)}
        if open_calls and results != open_calls:
            missing = ", ".join(sorted(open_calls - results))
            raise Invalid(f"{where}: tool_use ids were found without tool_result blocks "
                          f"immediately after: {missing}")
        if results and not open_calls:
            raise Invalid(f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                          f"{', '.join(sorted(results))}")
        open_calls = set()
        if message.role == "assistant":
            latest = []
            calls = [b for b in _blocks(message) if isinstance(b, ToolUseBlock)]
            if any(isinstance(b, (ToolResultBlock, ImageBlock)) for b in _blocks(message)):
                raise Invalid(f"{where}: assistant messages cannot contain images or tool results")
            open_calls = {b.id for b in calls}
            rounds += bool(calls)
            continue
        for block in _blocks(message):
            inner = block.content if isinstance(block, ToolResultBlock) else [block]
            for part in inner if isinstance(inner, list) else []:
                if isinstance(part, ImageBlock):
                    latest.append(decode_image(part.source.data, part.source.media_type,
                                               f"{where}.content"))
                    seen.append(latest[-1])
                elif isinstance(part, TextBlock) and not part.text:
                    raise Invalid(f"{where}: text content blocks must be non-empty")
            if isinstance(block, ToolUseBlock):
                raise Invalid(f"{where}: user messages cannot contain tool_use blocks")
    if open_calls:
        raise Invalid("messages: the final assistant tool_use blocks have no tool_result")
    return Conversation(model=request.model, tools=[t.name for t in request.tools],
                        tool_rounds_done=rounds,
                        answering_tool_round=_answering_tool_round(request.messages),
                        latest_images=latest, all_images=seen)


def _answering_tool_round(messages: list[Message]) -> bool:
    """The latest assistant message called tools (their results follow: checked above)."""
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    return last is not None and any(isinstance(b, ToolUseBlock) for b in _blocks(last))

def handle(payload: object, seq: int, script: Script) -> Reply | Streamed:
    request = convert(payload, Request, "body")
    assert isinstance(request, Request)
    decision = decide(_read(request), script)
    if isinstance(decision, RefuseImages):
        raise Invalid(decision.message, code="invalid_request_error")
    content: list[dict[str, Any]]
    if isinstance(decision, CallTools):
        content = [{"type": "tool_use", "id": f"toolu_{seq:04d}_{i}", "name": name,
                    "input": decision.input()} for i, name in enumerate(decision.names)]
        stop = "tool_use"
    else:
        assert isinstance(decision, Answer)
        content, stop = [{"type": "text", "text": decision.text}], "end_turn"
    message = {
        "id": f"msg_sim_{seq:04d}", "type": "message", "role": "assistant",
        "model": request.model, "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 100 + seq, "output_tokens": 10, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0},
    }
    return streams.anthropic(message) if request.stream else json_reply(message)
