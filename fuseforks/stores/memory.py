"""An in-memory event store: the reference for the contract, and the store of tests and replay."""

from __future__ import annotations

from collections.abc import Sequence

from fuseforks.events.codec import Envelope, encode_event
from fuseforks.events.privacy import PixelLeakError, find_pixel_leak
from fuseforks.events.types import TurnEnded, TurnStarted
from fuseforks.stores.store import TurnInfo, check_continuation


class MemoryStore:
    def __init__(self) -> None:
        self._turns: dict[str, list[Envelope]] = {}

    def append(self, envelopes: Sequence[Envelope]) -> None:
        batch = list(envelopes)
        for envelope in batch:  # the same last guard as the SQLite store, before anything is kept
            leak = find_pixel_leak(encode_event(envelope.event))
            if leak is not None:
                raise PixelLeakError(
                    f"memory store: refusing to store {envelope.kind} #{envelope.seq}: it holds {leak}"
                )
        turn_id = check_continuation(batch, self.last_seq(batch[0].turn_id) if batch else 0)
        self._turns.setdefault(turn_id, []).extend(batch)

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        return [e for e in self._turns.get(turn_id, []) if e.seq > after]

    def conversation(self, conversation_id: str) -> list[Envelope]:
        return [
            e for es in self._turns.values()
            if isinstance(es[0].event, TurnStarted) and es[0].event.conversation_id == conversation_id
            for e in es if isinstance(e.event, TurnStarted | TurnEnded)
        ]

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        wanted = set(kinds)
        found = [e for es in self._turns.values() for e in es if e.kind in wanted]
        return sorted(found, key=lambda e: (e.at, e.turn_id, e.seq))

    def last_seq(self, turn_id: str) -> int:
        stored = self._turns.get(turn_id)
        return stored[-1].seq if stored else 0

    def turns(self) -> list[TurnInfo]:
        infos = [
            TurnInfo(turn_id=t, events=len(es), first_at=es[0].at, last_at=es[-1].at)
            for t, es in self._turns.items()
        ]
        return sorted(infos, key=lambda info: (info.first_at, info.turn_id))

    def close(self) -> None:
        self._turns = {}
