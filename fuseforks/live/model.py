"""A real provider behind the model port."""

from __future__ import annotations

import contextvars
from typing import Any

from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.ports.model import ModelNotes, TextListener
from fuseforks.ports.notices import JpegResendNotice, RetryNotice
from fuseforks.wires.base import Endpoint
from fuseforks.wires.http import ProviderClient

_notes: contextvars.ContextVar[ModelNotes | None] = contextvars.ContextVar("fuseforks_notes",
                                                                         default=None)
_text: contextvars.ContextVar[_CallText | None] = contextvars.ContextVar("fuseforks_text",
                                                                        default=None)


class _CallText:
    """The text listener of one call, with the attempt its deltas belong to: every request the
    client sends again (a retry, the JPEG resend) starts the answer over."""

    __slots__ = ("attempt", "listener")

    def __init__(self, listener: TextListener) -> None:
        self.listener = listener
        self.attempt = 1

    def __call__(self, text: str) -> None:
        self.listener(text, self.attempt)


class LiveModel:
    """A provider behind `ProviderClient`. One client serves every turn of the process that uses
    this model: each call's notices (and streamed text) reach the turn that made it through
    context variables, so concurrent turns never hear each other's retries."""

    def __init__(self, wire: WireName, model: str, endpoint: Endpoint | None = None,
                 **client_options: Any) -> None:
        self.client = ProviderClient(
            wire,
            endpoint,
            on_retry=_retried,
            on_retry_stop=lambda stop: _current().stopped(stop),
            on_jpeg_resend=_jpeg_resend,
            **client_options,
        )
        self.wire: WireName = self.client.wire.name
        self.model = model
        self.endpoint_host = self.client.host or ""
        self.placement: Placement = self.client.wire.placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes, *,
                   on_text: TextListener | None = None) -> ChatResponse:
        call_text = _CallText(on_text) if on_text is not None else None
        token, text_token = _notes.set(notes), _text.set(call_text)
        try:
            return await self.client.chat(request, vault, on_text=call_text)
        finally:
            _text.reset(text_token)
            _notes.reset(token)

    async def aclose(self) -> None:
        await self.client.aclose()


def _current() -> ModelNotes:
    notes = _notes.get()
    assert notes is not None, "a provider notice arrived outside a turn's call"
    return notes


def _restart() -> None:
    call_text = _text.get()
    if call_text is not None:
        call_text.attempt += 1


def _retried(notice: RetryNotice) -> None:
    _current().retried(notice)
    _restart()


def _jpeg_resend(notice: JpegResendNotice) -> None:
    _current().jpeg_resend(notice)
    _restart()
