"""The model port: one call to a model, and what the caller hears while it works.

Besides the notices that become events (retries, give-ups, the JPEG resend), a call may hand its
answer's text to a listener while it arrives. Those deltas are progress, not facts: nothing of
them is recorded, and the call's complete `ChatResponse` — the same whether it streamed or not —
is still the only thing the engine records (`ResponseReceived`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import msgspec

from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.names import Placement, RequestPurpose, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop


class ModelNotes(Protocol):
    """What the model port reports while it works (retries, give-ups, the JPEG resend)."""

    def retried(self, notice: RetryNotice) -> None: ...

    def stopped(self, stop: RetryStop) -> None: ...

    def jpeg_resend(self, notice: JpegResendNotice) -> None: ...


TextListener = Callable[[str, int], None]
"""Hears a model call's answer text as it arrives: `(text, attempt)`. `attempt` counts the
requests of the call from 1; a delta of a higher attempt than the ones before it means the earlier
text was lost with its stream (a cut, a retried error) and the answer starts again."""


class TextDelta(msgspec.Struct, frozen=True, kw_only=True):
    """A piece of a model's answer text while it arrives: progress, never recorded.

    `round` and `purpose` name the request it answers (the `RequestSent` it belongs to).
    `attempt` counts the HTTP requests of that call from 1: when it grows, the text of the
    earlier attempt is void (its stream was cut and the request was sent again) and the answer
    starts over."""

    round: int
    purpose: RequestPurpose
    text: str
    attempt: int = 1


OnText = Callable[[TextDelta], None]
"""What a turn's caller gives to hear the text of every model call of the turn."""


def text_listener(on_text: OnText | None, round_: int,
                  purpose: RequestPurpose) -> TextListener | None:
    """The listener a turn hands its model port for one call: deltas tagged with the call's
    round and purpose; None without `on_text` (the call does not stream)."""
    if on_text is None:
        return None

    def listen(text: str, attempt: int) -> None:
        on_text(TextDelta(round=round_, purpose=purpose, text=text, attempt=attempt))

    return listen


class ModelPort(Protocol):
    wire: WireName
    model: str
    endpoint_host: str
    placement: Placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes, *,
                   on_text: TextListener | None = None) -> ChatResponse:
        """One model call; raises a `fuseforks.core.errors.WireError` subclass when it fails.
        With `on_text` the call streams, and the answer's text reaches it as it arrives; the
        returned response is the same as without."""
