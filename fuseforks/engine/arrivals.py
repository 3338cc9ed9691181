"""The order a round's tool results are recorded in: as each tool finishes, or as recorded.

A live round records each result the moment its tool finishes, so the record knows when every
tool ended (a 2 s tool next to a 7 s one lasts 2 s in its span) — the order of the results is
the order they arrived in. That order is an input like a model's answer: a re-driven turn (replay,
a takeover) gets the recorded order for the rounds its record holds and records its results in
exactly that order, whatever order its ports answer in.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from fuseforks.events.codec import Envelope
from fuseforks.events.types import ToolResultRecorded


def recorded_arrivals(recorded: Sequence[Envelope]) -> dict[int, tuple[str, ...]]:
    """Per round, the call ids of its recorded results, in the order they were recorded."""
    arrivals: dict[int, list[str]] = {}
    for envelope in recorded:
        if isinstance(envelope.event, ToolResultRecorded):
            arrivals.setdefault(envelope.event.round, []).append(envelope.event.call_id)
    return {round_: tuple(ids) for round_, ids in arrivals.items()}


class Arrivals:
    """One round's results, let through in arrival order (live) or in the recorded order."""

    def __init__(self, recorded: Sequence[str] | None = None) -> None:
        self._recorded = list(recorded) if recorded is not None else None
        self._next = 0
        self._moved = anyio.Event()
        self.settled = anyio.Event()
        """Set once every recorded result of the round is recorded again (at once when live)."""
        if not self._recorded:
            self.settled.set()

    async def turn_of(self, call_id: str) -> None:
        """Return when the result of `call_id` may be recorded."""
        recorded = self._recorded
        if recorded is None or call_id not in recorded[self._next :]:
            return
        while recorded[self._next] != call_id:
            await self._moved.wait()

    def recorded(self, call_id: str) -> None:
        """The result of `call_id` is recorded: let the next one through."""
        recorded = self._recorded
        if recorded is None or self._next >= len(recorded) or recorded[self._next] != call_id:
            return
        self._next += 1
        moved, self._moved = self._moved, anyio.Event()
        moved.set()
        if self._next == len(recorded):
            self.settled.set()
