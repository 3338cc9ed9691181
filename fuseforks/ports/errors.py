"""How a model call fails, as the engine sees it — whatever wire or recording stands behind it.

The engine's decisions (resend without images, give up, report) depend only on these classes and
their fields; the wires raise them from each provider's error body, replay raises them from the
record. Fields are safe to log: no keys, no image data.
"""

from __future__ import annotations

from typing import Any

from fuseforks.core.names import RefusalKind, WireName

__all__ = ["RefusalKind", "WireError", "WireGarbage", "WireRejected", "WireRetryable",
           "WireUnavailable"]


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

    `refusal` says what the refusal is about (`RefusalKind`): `image` — the images themselves
    could not be processed; `placement` — images are not accepted where they were put (inside a
    tool result); `parameter` — a parameter, the model or the request's shape; `other` — anything
    else, a refusal that names nothing among them included. The wires read it off the provider's
    error body (`fuseforks/wires/errors.py`); the openai-compat JPEG fallback sets `image` on an
    unexplained second 400.

    `images_rejected` (read-only) is true for `image` and `placement`. The constructor still
    takes `images_rejected=True`, meaning `refusal="image"`, as records written before the refusal
    kinds existed are replayed that way.
    """

    def __init__(self, *, refusal: RefusalKind = "other", images_rejected: bool = False,
                 **fields: Any) -> None:
        if images_rejected and refusal == "other":
            refusal = "image"
        elif images_rejected and refusal not in _ABOUT_IMAGES:
            raise ValueError(f"images_rejected=True contradicts refusal={refusal!r}")
        self.refusal: RefusalKind = refusal
        self.attempts = 1  # requests sent before the refusal (set by the client)
        super().__init__(**fields)

    @property
    def images_rejected(self) -> bool:
        """The refusal is about the tool images: what they are, or where they sit."""
        return self.refusal in _ABOUT_IMAGES


_ABOUT_IMAGES: frozenset[RefusalKind] = frozenset({"image", "placement"})


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
