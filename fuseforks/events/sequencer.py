"""Seals events into envelopes: the turn's next seq numbers and the clock's time.

Sealing is where the pixel guard looks at an event, on the JSON body a store keeps. The batch it
returns carries those bodies (`Sealed`), so that the store keeps what was checked instead of
encoding and checking every event a second time.

The clock is an interface so replay and tests can supply recorded or fixed times.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from fuseforks.events.codec import SCHEMA_VERSION, Envelope
from fuseforks.events.privacy import vetted_body
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


class Sealed(list[Envelope]):
    """Envelopes with the JSON body of each event as the pixel guard passed it. A body of None
    was never checked (its event was replaced after sealing, as a secret's marker does): a store
    encodes and checks that one itself. Any other batch is a plain sequence, checked whole.

    Stores keep these bodies as they are: only the sequencer (and `Secrets.batch`, which drops
    the body of an event it changes) makes one, and nothing changes one after it is made."""

    def __init__(self, envelopes: Iterable[Envelope], bodies: Iterable[bytes | None]) -> None:
        super().__init__(envelopes)
        self.bodies: list[bytes | None] = list(bodies)
        if len(self.bodies) != len(self):
            raise ValueError("a sealed batch holds one body per envelope")


class Sequencer:
    def __init__(self, turn_id: str, clock: Clock, last_seq: int = 0) -> None:
        self.turn_id = turn_id
        self.clock = clock
        self.last_seq = last_seq

    def seal(self, events: Sequence[TurnEvent]) -> Sealed:
        at = self.clock.now()
        bodies = [vetted_body(event) for event in events]  # all checked before a seq is taken
        sealed = []
        for event in events:
            self.last_seq += 1
            sealed.append(
                Envelope(turn_id=self.turn_id, seq=self.last_seq, version=SCHEMA_VERSION, at=at,
                         event=event)
            )
        return Sealed(sealed, bodies)
