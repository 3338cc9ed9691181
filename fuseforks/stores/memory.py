"""An in-memory event store: the reference for the contract, and the store of tests and replay.

It keeps each turn's envelopes in a list; everything a record answers beyond reading a turn and
listing the turns (a conversation, the events of some kinds, the audit) is the contract's own
fold over those two (`fuseforks.stores.store.Record`).
"""

from __future__ import annotations

from collections.abc import Sequence

from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnStarted
from fuseforks.stores.rows import guarded_bodies
from fuseforks.stores.store import EventStore, TurnInfo, check_continuation


class MemoryStore(EventStore):
    name = "memory store"

    def __init__(self) -> None:
        self._turns: dict[str, list[Envelope]] = {}

    def append(self, envelopes: Sequence[Envelope]) -> None:
        guarded_bodies(self.name, envelopes)  # the last guard of every store, before anything is kept
        batch = list(envelopes)
        turn_id = check_continuation(batch, self.last_seq(batch[0].turn_id) if batch else 0)
        self._turns.setdefault(turn_id, []).extend(batch)

    def append_now(self, envelopes: Sequence[Envelope]) -> bool:
        self.append(envelopes)
        return True

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        return [e for e in self._turns.get(turn_id, []) if e.seq > after]

    def last_seq(self, turn_id: str) -> int:
        stored = self._turns.get(turn_id)
        return stored[-1].seq if stored else 0

    def conversation_size(self, conversation_id: str) -> int:
        return sum(1 for stored in self._turns.values()
                   if isinstance(start := stored[0].event, TurnStarted)
                   and start.conversation_id == conversation_id)

    def turns(self) -> list[TurnInfo]:
        infos = [
            TurnInfo(turn_id=t, events=len(es), first_at=es[0].at, last_at=es[-1].at)
            for t, es in self._turns.items()
        ]
        return sorted(infos, key=lambda info: (info.first_at, info.turn_id))

    def close(self) -> None:
        self._turns = {}
