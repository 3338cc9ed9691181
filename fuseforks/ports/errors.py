"""How a model call fails, as the engine sees it — whatever wire or recording stands behind it.

The engine's decisions (resend without images, give up, report) depend only on these classes and
their fields; the wires raise them from each provider's error body, replay raises them from the
record. Fields are safe to log: no keys, no image data.
"""

from __future__ import annotations

from typing import Any

from fuseforks.core.names import WireName


class WireError(Exception):
    """Base of every provider-call failure; fields are safe to log (no keys, no image data)."""

    def __init__(
        self,
        *,
        wire: WireName,
        status: int | None,
        error_class: str,
        error_type: str = "",
        code: str = "",
        message: str = "",
    ) -> None:
        self.wire = wire
        self.status = status
        self.error_class = error_class
        self.error_type = error_type
        self.code = code
        self.message = message
        super().__init__(self._describe())

    def _describe(self) -> str:
        parts = [f"backend={self.wire}", f"status={self.status if self.status is not None else '-'}"]
        parts.append(f"class={self.error_class}")
        if self.error_type:
            parts.append(f"type={self.error_type}")
        if self.code:
            parts.append(f"code={self.code}")
        text = f"{type(self).__name__}: " + " ".join(parts)
        return f"{text}: {self.message}" if self.message else text


class WireRejected(WireError):
    """A 4xx the provider will refuse again if resent unchanged: never retried at the HTTP layer.

    `images_rejected` is true when the refusal is about the images (400/413/422 whose code or
    message names them, or the second 400 of the openai-compat JPEG fallback).
    """

    def __init__(self, *, images_rejected: bool = False, **fields: Any) -> None:
        self.images_rejected = images_rejected
        self.attempts = 1  # requests sent before the refusal (set by the client)
        super().__init__(**fields)


class WireRetryable(WireError):
    """429, 5xx or a transport failure: worth another attempt after a delay."""

    def __init__(self, *, retry_after: float | None = None, **fields: Any) -> None:
        self.retry_after = retry_after
        super().__init__(**fields)


class WireUnavailable(WireError):
    """Retries exhausted; `attempts` says how many requests were sent."""

    def __init__(self, *, attempts: int, **fields: Any) -> None:
        self.attempts = attempts
        super().__init__(**fields)

    def _describe(self) -> str:
        return f"{super()._describe()} (gave up after {self.attempts} attempts)"


class WireGarbage(WireError):
    """A 2xx whose body is not the response shape the wire expects."""
