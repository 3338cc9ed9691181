"""The model port: one call to a model, and what the caller hears while it works."""

from __future__ import annotations

from typing import Protocol

from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop


class ModelNotes(Protocol):
    """What the model port reports while it works (retries, give-ups, the JPEG resend)."""

    def retried(self, notice: RetryNotice) -> None: ...

    def stopped(self, stop: RetryStop) -> None: ...

    def jpeg_resend(self, notice: JpegResendNotice) -> None: ...


class ModelPort(Protocol):
    wire: WireName
    model: str
    endpoint_host: str
    placement: Placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes) -> ChatResponse:
        """One model call; raises a `fuseforks.ports.errors.WireError` subclass when it fails."""
