"""What the HTTP edge reports while it works; the engine turns these into events and log lines.

The wording of the log lines lives in one place, the log projection (`fuseforks.projections.log`),
which reads the events the engine records from these notices. No field ever holds a key, a request
body or image data.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuseforks.core.names import WireName


@dataclass(frozen=True, slots=True)
class RetryNotice:
    wire: WireName
    model: str
    host: str
    attempt: int
    max_attempts: int
    status: int | None
    error_class: str
    code: str
    delay: float


@dataclass(frozen=True, slots=True)
class RetryStop:
    wire: WireName
    model: str
    host: str
    attempts: int
    status: int | None
    error_class: str
    code: str
    images_rejected: bool


@dataclass(frozen=True, slots=True)
class JpegResendNotice:
    """openai-compat: a 400 to a request with WebP images is being resent once as JPEG."""

    wire: WireName
    model: str
    host: str
    converted: int

