"""The engine's edges: the model and the tools, behind interfaces small enough to swap.

A live turn plugs in a `ProviderClient` and an MCP `ToolHub`; replay plugs in the recorded responses
and tool outputs. Whatever sits behind a port, its results are recorded in events, which is what
makes a turn re-drivable.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from fuseforks.engine.tool_output import ToolOutput
from fuseforks.engine.vault import ImageVault
from fuseforks.events.types import Placement, ToolSpecRecord
from fuseforks.wires.base import Endpoint
from fuseforks.wires.canonical import ChatRequest, ChatResponse
from fuseforks.wires.http import ProviderClient
from fuseforks.wires.notices import AttachmentFallback, RetryNotice, RetryStop
from fuseforks.wires.registry import get_wire


class ModelNotes(Protocol):
    """What the model port reports while it works (retries, give-ups, the JPEG fallback)."""

    def retried(self, notice: RetryNotice) -> None: ...

    def stopped(self, stop: RetryStop) -> None: ...

    def attachment_fallback(self, fallback: AttachmentFallback) -> None: ...


class ModelPort(Protocol):
    wire: str
    model: str
    endpoint_host: str
    placement: Placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes) -> ChatResponse:
        """One model call; raises a `WireError` subclass when it fails."""


class ToolPort(Protocol):
    def tool_specs(self) -> Sequence[ToolSpecRecord]: ...

    def server_of(self, name: str) -> str: ...

    async def call(self, name: str, arguments: dict[str, Any], language: str) -> ToolOutput:
        """Every failure is a tool-error output, never an exception."""


_notes: contextvars.ContextVar[ModelNotes | None] = contextvars.ContextVar("fuseforks_notes",
                                                                         default=None)


class LiveModel:
    """A real provider behind `ProviderClient`. One client serves every turn of the process that
    uses this model: each call's notices reach the turn that made it through a context variable,
    so concurrent turns never hear each other's retries."""

    def __init__(self, wire: str, model: str, endpoint: Endpoint | None = None,
                 **client_options: Any) -> None:
        self.client = ProviderClient(
            wire,
            endpoint,
            on_retry=lambda notice: _current().retried(notice),
            on_retry_stop=lambda stop: _current().stopped(stop),
            on_attachment_fallback=lambda fallback: _current().attachment_fallback(fallback),
            **client_options,
        )
        self.wire = self.client.wire.name
        self.model = model
        self.endpoint_host = self.client.host or ""
        self.placement: Placement = get_wire(self.wire).placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes) -> ChatResponse:
        token = _notes.set(notes)
        try:
            return await self.client.chat(request, vault)
        finally:
            _notes.reset(token)

    async def aclose(self) -> None:
        await self.client.aclose()


def _current() -> ModelNotes:
    notes = _notes.get()
    assert notes is not None, "a provider notice arrived outside a turn's call"
    return notes


class HubTools:
    """MCP tools through a started `ToolHub`."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self._servers = {d.name: d.server for d in hub.list_tools()}

    def tool_specs(self) -> list[ToolSpecRecord]:
        return [
            ToolSpecRecord(name=d.name, description=d.description,
                           input_schema=msgspec.json.encode(d.input_schema).decode())
            for d in self.hub.list_tools()
        ]

    def server_of(self, name: str) -> str:
        return str(self._servers.get(name, ""))

    async def call(self, name: str, arguments: dict[str, Any], language: str) -> ToolOutput:
        output: ToolOutput = await self.hub.call(name, arguments, language)
        return output
