"""Progress a person sees while a turn waits: which provider, which tool. Not facts: not recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.names import Language
from fuseforks.events.types import ToolSpecRecord
from fuseforks.images.vault import ImageVault
from fuseforks.ports.model import ModelNotes, ModelPort, TextListener
from fuseforks.ports.tools import ToolOutput, ToolPort

Progress = Callable[[str], None]


def progress_line(tool: str, progress: float, total: float | None, message: str | None) -> str:
    """What a server's progress notification puts on the progress line:
    `tool cam__scan: 3/10 reading frames` (the total and the message when the server gives them)."""
    done = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
    return f"tool {tool}: {done}" + (f" {message}" if message else "")


class ProgressModel:
    """The model port, saying what the turn is waiting for."""

    def __init__(self, inner: ModelPort, progress: Progress) -> None:
        self.inner = inner
        self.progress = progress
        self.wire, self.model = inner.wire, inner.model
        self.endpoint_host, self.placement = inner.endpoint_host, inner.placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes, *,
                   on_text: TextListener | None = None) -> ChatResponse:
        self.progress(f"waiting on {self.wire} ({self.model} at {self.endpoint_host})")
        return await self.inner.chat(request, vault, notes, on_text=on_text)


class ProgressTools:
    """The tool port, saying which tool the turn is calling."""

    def __init__(self, inner: ToolPort, progress: Progress) -> None:
        self.inner = inner
        self.progress = progress

    def tool_specs(self) -> Sequence[ToolSpecRecord]:
        return self.inner.tool_specs()

    def server_of(self, name: str) -> str:
        return self.inner.server_of(name)

    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        self.progress(f"calling tool {name}")
        return await self.inner.call(name, arguments, language)
