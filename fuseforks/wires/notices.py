"""What the HTTP edge reports while it works; the engine turns these into events and log lines.

Each notice can render its SPEC §7 line (`line()`), so the wording lives in one place. No field
ever holds a key, a request body or image data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _or_dash(value: object) -> str:
    """A `key=value` field value: `-` when empty, never containing spaces."""
    return "-" if value in (None, "") else re.sub(r"\s+", "_", str(value).strip())


@dataclass(frozen=True, slots=True)
class RetryNotice:
    wire: str
    model: str
    host: str
    attempt: int
    max_attempts: int
    status: int | None
    error_class: str
    code: str
    delay: float

    def line(self) -> str:
        return (
            f"llm retry: backend={self.wire} model={self.model} host={self.host} "
            f"attempt={self.attempt}/{self.max_attempts} status={_or_dash(self.status)} "
            f"class={self.error_class} code={_or_dash(self.code)} delay_ms={round(self.delay * 1000)}"
        )


@dataclass(frozen=True, slots=True)
class RetryStop:
    wire: str
    model: str
    host: str
    attempts: int
    status: int | None
    error_class: str
    code: str
    images_rejected: bool

    def line(self) -> str:
        text = (
            f"llm retry stop: backend={self.wire} model={self.model} host={self.host} "
            f"attempts={self.attempts} status={_or_dash(self.status)} class={self.error_class} "
            f"code={_or_dash(self.code)}"
        )
        return text + " images_rejected=true" if self.images_rejected else text


@dataclass(frozen=True, slots=True)
class AttachmentFallback:
    wire: str
    model: str
    host: str
    converted: int

    def line(self) -> str:
        return (
            f"attachment fallback: backend={self.wire} model={self.model} host={self.host} "
            f"converted={self.converted} to=jpeg"
        )
