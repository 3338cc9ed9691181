"""Simulated OpenAI-compatible Chat Completions endpoint.

It is as strict as the strictest compatible endpoint observed: `image_url` inside a
`role:"tool"` message is refused with Gemini's compat-endpoint error ("Invalid content part type:
image_url") — with OpenAI's own body for OpenAI's models (`OPENAI_CHAT_PREFIXES`) — and tool
messages must directly follow the assistant message that called them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from fuseforks.simulator import streams
from fuseforks.simulator.brain import (
    MAX_TOKENS_REFUSING_PREFIXES,
    OPENAI_CHAT_PREFIXES,
    Answer,
    CallTools,
    Conversation,
    RefuseImages,
    Script,
    decide,
)
from fuseforks.simulator.media import decode_data_url
from fuseforks.simulator.shapes import Invalid, Reply, Streamed, convert, json_reply

WIRE = "openai-compat"


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class ImageUrl(_Strict):
    url: str
    detail: Literal["auto", "low", "high"] | None = None


class TextPart(_Strict, tag="text", tag_field="type"):
    text: str


class ImagePart(_Strict, tag="image_url", tag_field="type"):
    image_url: ImageUrl


class Function(_Strict):
    name: str
    arguments: str


class ToolCallItem(_Strict):
    id: str
    type: Literal["function"]
    function: Function


class SystemMsg(_Strict, tag="system", tag_field="role"):
    content: str | list[TextPart]


class DeveloperMsg(_Strict, tag="developer", tag_field="role"):
    content: str | list[TextPart]


class UserMsg(_Strict, tag="user", tag_field="role"):
    content: str | list[TextPart | ImagePart]


class AssistantMsg(_Strict, tag="assistant", tag_field="role"):
    content: str | list[TextPart] | None = None
    tool_calls: list[ToolCallItem] = []


class ToolMsg(_Strict, tag="tool", tag_field="role"):
    tool_call_id: str
    content: str | list[dict[str, Any]]


class FunctionDef(_Strict):
    name: str
    description: str = ""
    parameters: dict[str, Any] = {}
    strict: bool | None = None


class ToolDef(_Strict):
    type: Literal["function"]
    function: FunctionDef


class StreamOptions(_Strict):
    include_usage: bool | None = None
    include_obfuscation: bool | None = None


class Request(_Strict):
    model: str
    messages: list[SystemMsg | DeveloperMsg | UserMsg | AssistantMsg | ToolMsg]
    tools: list[ToolDef] = []
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    temperature: float | None = None
    tool_choice: str | dict[str, Any] | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None


# vLLM refuses an image in a tool message (vllm-project/vllm#43203); Ollama, llama.cpp's server
# and LM Studio take the message and leave the image out of what the model reads
# (ollama/ollama#16038): the model answers as if there were none.
TOOL_IMAGE_REFUSED_BY_VLLM = "tool message content only supports text content"
TOOL_IMAGE_IGNORING_SERVERS = frozenset({"ollama", "llamacpp", "lmstudio"})


def _tool_content(message: ToolMsg, where: str, model: str, server: str) -> None:
    if isinstance(message.content, str):
        return
    for part in message.content:
        kind = part.get("type")
        if kind == "image_url" and server == "vllm":
            raise Invalid(TOOL_IMAGE_REFUSED_BY_VLLM)
        if kind == "image_url" and server in TOOL_IMAGE_IGNORING_SERVERS:
            continue
        if kind == "image_url" and model.startswith(OPENAI_CHAT_PREFIXES):
            raise Invalid(f"Invalid '{where}'. Image URLs are only allowed for messages with role "
                          "'user', but this message with role 'tool' contains an image URL.",
                          code="invalid_value", param=where)
        if kind != "text":
            raise Invalid(f"Invalid content part type: {kind}")
        if set(part) != {"type", "text"} or not isinstance(part.get("text"), str):
            raise Invalid(f"{where}: invalid text content part")


def _read(request: Request, server: str) -> Conversation:
    rounds = 0
    seen: list[bytes] = []
    latest: list[bytes] = []
    pending: list[str] = []
    for n, message in enumerate(request.messages):
        where = f"messages[{n}]"
        if isinstance(message, ToolMsg):
            if message.tool_call_id not in pending:
                raise Invalid("Invalid parameter: messages with role 'tool' must be a response to "
                              "a preceeding message with 'tool_calls'.")
            _tool_content(message, where, request.model, server)
            pending.remove(message.tool_call_id)
            continue
        if pending:
            raise Invalid("An assistant message with 'tool_calls' must be followed by tool "
                          "messages responding to each 'tool_call_id'. The following "
                          f"tool_call_ids did not have response messages: {', '.join(pending)}")
        if isinstance(message, AssistantMsg):
            latest = []
            pending = [c.id for c in message.tool_calls]
            rounds += bool(pending)
        elif isinstance(message, UserMsg) and isinstance(message.content, list):
            for part in message.content:
                if isinstance(part, ImagePart):
                    latest.append(decode_data_url(part.image_url.url, f"{where}.content"))
                    seen.append(latest[-1])
    if pending:
        raise Invalid(f"tool_call_ids did not have response messages: {', '.join(pending)}")
    last = next((m for m in reversed(request.messages) if isinstance(m, AssistantMsg)), None)
    answering = last is not None and bool(last.tool_calls)  # the tool messages follow: checked
    return Conversation(model=request.model, tools=[t.function.name for t in request.tools],
                        tool_rounds_done=rounds, answering_tool_round=answering,
                        latest_images=latest, all_images=seen)


def _refuse_reasoning_parameters(request: Request) -> None:
    """OpenAI's reasoning models refuse `max_tokens` and `temperature`, with these bodies."""
    if not request.model.startswith(MAX_TOKENS_REFUSING_PREFIXES):
        return
    if request.max_tokens is not None:
        raise Invalid("Unsupported parameter: 'max_tokens' is not supported with this model. "
                      "Use 'max_completion_tokens' instead.",
                      code="unsupported_parameter", param="max_tokens")
    if request.temperature is not None:
        raise Invalid("Unsupported parameter: 'temperature' is not supported with this model.",
                      code="unsupported_parameter", param="temperature")


def handle(payload: object, seq: int, script: Script,
           server: str = "openai-compat") -> Reply | Streamed:
    """`server`: the wire whose endpoint this is (a local server treats a tool message's images
    its own way)."""
    request = convert(payload, Request, "body")
    assert isinstance(request, Request)
    if request.stream_options is not None and not request.stream:
        raise Invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                      param="stream_options")
    _refuse_reasoning_parameters(request)
    decision = decide(_read(request, server), script)
    if isinstance(decision, RefuseImages):
        raise Invalid(decision.message, code=decision.code)
    message: dict[str, Any]
    if isinstance(decision, CallTools):
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{seq:04d}_{i}", "type": "function",
             "function": {"name": name, "arguments": decision.arguments}}
            for i, name in enumerate(decision.names)]}
        finish = "tool_calls"
    else:
        assert isinstance(decision, Answer)
        message, finish = {"role": "assistant", "content": decision.text}, "stop"
    completion = {
        "id": f"chatcmpl-sim{seq:04d}", "object": "chat.completion", "created": 1_780_000_000,
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 100 + seq, "completion_tokens": 10, "total_tokens": 110 + seq,
                  "prompt_tokens_details": {"cached_tokens": 0}},
    }
    if not request.stream:
        return json_reply(completion)
    options = request.stream_options
    return streams.chat(completion, include_usage=bool(options and options.include_usage))
