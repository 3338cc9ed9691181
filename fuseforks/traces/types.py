"""The values the span projection makes and the OpenTelemetry edge sends, and what a span's ids
and times are derived from: the turn id, the seq of the event that opens it, and recorded times.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Literal

import msgspec

AttributeValue = str | bool | int | float | list[str] | list[int]
Attributes = dict[str, AttributeValue]
SpanKind = Literal["internal", "client"]
SpanStatus = Literal["unset", "error"]


class TraceEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A span event: something that happened at one moment inside a span (a retry, a cap)."""

    name: str
    time_ns: int
    attributes: Attributes = {}


class TraceSpan(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    trace_id: int
    span_id: int
    parent_span_id: int | None
    kind: SpanKind
    start_ns: int
    end_ns: int
    attributes: Attributes
    events: list[TraceEvent] = []
    status: SpanStatus = "unset"
    status_description: str = ""


def trace_id(turn_id: str) -> int:
    digest = hashlib.sha256(b"fuseforks.trace\x00" + turn_id.encode()).digest()
    return int.from_bytes(digest[:16], "big") or 1


def span_id(turn_id: str, seq: int) -> int:
    digest = hashlib.sha256(f"fuseforks.span\x00{turn_id}\x00{seq}".encode()).digest()
    return int.from_bytes(digest[:8], "big") or 1


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def time_ns(at: str) -> int:
    """An envelope's ISO-8601 time as nanoseconds since the epoch, exactly (no float)."""
    moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
