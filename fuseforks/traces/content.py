"""Span content in the GenAI conventions' JSON message format — attached only on opt-in.

The user's request, the system prompt, the model's answers, tool arguments and tool bodies are
content; images never are (a span names them by digest, format and size only).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from fuseforks.events.types import ToolSpecRecord
from fuseforks.traces import conventions as c

_TRUE = frozenset({"true", "span_only", "span_and_event"})
_json = msgspec.json.Encoder()
_arguments = msgspec.json.Decoder()


def capture_content(environ: Mapping[str, str] | None = None) -> bool:
    """The conventions' content switch: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` set
    to `true` (or `SPAN_ONLY` / `SPAN_AND_EVENT`, the newer spellings), case-insensitive. Anything
    else, or unset, captures no content."""
    value = (os.environ if environ is None else environ).get(c.CAPTURE_CONTENT_ENV, "")
    return value.strip().lower() in _TRUE


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def message(message: Message) -> dict[str, Any]:
    match message:
        case SystemMessage() | UserMessage():
            return {"role": "system" if isinstance(message, SystemMessage) else "user",
                    "parts": [text_part(message.text)]}
        case AssistantMessage():
            parts = [text_part(message.text)] if message.text else []
            parts += [{"type": "tool_call", "id": call.id, "name": call.name,
                       "arguments": call.arguments} for call in message.tool_calls]
            return {"role": "assistant", "parts": parts}
        case ToolResultMessage():
            return {"role": "tool", "parts": [
                {"type": "tool_call_response", "id": message.tool_call_id,
                 "response": message.text}]}
    raise AssertionError(f"unknown message {message!r}")


def encode(value: Any) -> str:
    return _json.encode(value).decode()


def decode_arguments(arguments: str) -> Any:
    return _arguments.decode(arguments)


def tool_definitions(tools: list[ToolSpecRecord]) -> str:
    return encode([{"type": "function", "name": t.name, "description": t.description,
                    "parameters": _arguments.decode(t.input_schema)} for t in tools])


def output(text: str, calls: list[dict[str, Any]], finish_reason: str) -> str:
    parts = ([text_part(text)] if text else []) + calls
    return encode([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])
