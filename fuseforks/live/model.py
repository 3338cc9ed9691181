"""A real provider behind the model port."""

from __future__ import annotations

import contextvars
from typing import Any

from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.ports.model import ModelNotes
from fuseforks.wires.base import Endpoint
from fuseforks.wires.http import ProviderClient

_notes: contextvars.ContextVar[ModelNotes | None] = contextvars.ContextVar("fuseforks_notes",
                                                                         default=None)


class LiveModel:
    """A provider behind `ProviderClient`. One client serves every turn of the process that uses
    this model: each call's notices reach the turn that made it through a context variable, so
    concurrent turns never hear each other's retries."""

    def __init__(self, wire: WireName, model: str, endpoint: Endpoint | None = None,
                 **client_options: Any) -> None:
        self.client = ProviderClient(
            wire,
            endpoint,
            on_retry=lambda notice: _current().retried(notice),
            on_retry_stop=lambda stop: _current().stopped(stop),
            on_jpeg_resend=lambda notice: _current().jpeg_resend(notice),
            **client_options,
        )
        self.wire: WireName = self.client.wire.name
        self.model = model
        self.endpoint_host = self.client.host or ""
        self.placement: Placement = self.client.wire.placement

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
