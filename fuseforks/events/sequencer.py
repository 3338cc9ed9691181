"""Seals events into envelopes: the turn's next seq numbers and the clock's time.

The clock is an interface so replay and tests can supply recorded or fixed times.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from fuseforks.events.codec import SCHEMA_VERSION, Envelope
from fuseforks.events.privacy import assert_no_pixels
from fuseforks.events.types import TurnEvent


class Clock(Protocol):
    def now(self) -> str:
        """The current time as ISO-8601 UTC with milliseconds."""


class SystemClock:
    def now(self) -> str:
        return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FixedClock:
    """A clock that advances by `step_ms` per reading — deterministic times for tests and demos."""

    def __init__(self, start: str = "2026-01-01T00:00:00.000Z", step_ms: int = 1) -> None:
        self._at = datetime.fromisoformat(start.replace("Z", "+00:00"))
        self._step_ms = step_ms

    def now(self) -> str:
        text = self._at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self._at += timedelta(milliseconds=self._step_ms)
        return text


class Sequencer:
    def __init__(self, turn_id: str, clock: Clock, last_seq: int = 0) -> None:
        self.turn_id = turn_id
        self.clock = clock
        self.last_seq = last_seq

    def seal(self, events: Sequence[TurnEvent]) -> list[Envelope]:
        at = self.clock.now()
        sealed = []
        for event in events:
            assert_no_pixels(event)
            self.last_seq += 1
            sealed.append(
                Envelope(turn_id=self.turn_id, seq=self.last_seq, version=SCHEMA_VERSION, at=at,
                         event=event)
            )
        return sealed
