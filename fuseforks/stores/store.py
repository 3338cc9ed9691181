"""The event store's small interface, shared by the in-memory, the SQLite and the PostgreSQL
store.

It is synchronous: a store's calls run off the event loop, in worker threads (`anyio.to_thread`),
and the turns of one agent may call it from several threads at once; the SQLite and PostgreSQL
stores are safe to share between threads.

An append is one unit of work — the engine appends a round at a time — and must continue the
turn's sequence exactly: the first envelope's seq is the turn's last seq + 1 and the rest follow
without gaps. That check doubles as the optimistic-concurrency guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import msgspec

from fuseforks.core.errors import ConcurrencyError
from fuseforks.events.codec import Envelope


class TurnInfo(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    events: int
    first_at: str
    last_at: str


class EventStore(Protocol):
    def append(self, envelopes: Sequence[Envelope]) -> None:
        """Store one unit of work atomically: all of it or none of it."""

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        """The turn's envelopes with seq > `after`, in order."""

    def last_seq(self, turn_id: str) -> int:
        """0 for an unknown turn."""

    def turns(self) -> list[TurnInfo]:
        """Every stored turn, oldest first."""

    def conversation(self, conversation_id: str) -> list[Envelope]:
        """The `TurnStarted` and `TurnEnded` envelopes of every turn of a conversation."""

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        """Every stored event of these kinds, across turns, oldest first (by time, turn, seq)."""

    def close(self) -> None: ...


def check_continuation(envelopes: Sequence[Envelope], last_seq: int) -> str:
    """Validate a batch against the stored tail; return its turn id."""
    if not envelopes:
        raise ValueError("append needs at least one envelope")
    turn_id = envelopes[0].turn_id
    expected = last_seq + 1
    for envelope in envelopes:
        if envelope.turn_id != turn_id:
            raise ValueError(
                f"one append holds one turn: {turn_id!r} and {envelope.turn_id!r} were mixed"
            )
        if envelope.seq != expected:
            raise ConcurrencyError(
                f"turn {turn_id}: expected seq {expected}, got {envelope.seq} "
                f"(stored tail is {last_seq}; another writer may have appended)"
            )
        expected += 1
    return turn_id
