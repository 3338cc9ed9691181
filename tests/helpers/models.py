"""A model port for engine tests: it gives its answers in order and keeps the requests it got."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fuseforks.core.canonical import ChatRequest, ChatResponse, ToolCall, Usage
from fuseforks.images.vault import ImageVault


class ScriptedModel:
    wire, model, endpoint_host, placement = "anthropic", "m", "h", "native"

    def __init__(self, answers: Iterable[ChatResponse]) -> None:
        self.answers = list(answers)
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: Any, *,
                   on_text: Any = None) -> ChatResponse:
        self.requests.append(request)
        return self.answers.pop(0)


def one_tool_round(*calls: ToolCall) -> list[ChatResponse]:
    """A turn's answers: these tool calls, then `done`."""
    return [ChatResponse(text="", tool_calls=list(calls), usage=Usage(), stop_reason="tool_use",
                         raw_model="m"),
            ChatResponse(text="done", tool_calls=[], usage=Usage(), stop_reason="end_turn",
                         raw_model="m")]
