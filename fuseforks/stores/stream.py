"""A JSON Lines stream as a record: read whole when opened, read-only.

A stream is the portable form of turns (`fuseforks export`, `replays/`); the commands that read
turns take one wherever they take a store. It implements the reader tier only
(`fuseforks.stores.store.Record`): its audit, conversations and events of kinds are the
contract's folds over its turns. A last line cut short (a writer stopped mid-line) is left out
and said in `notices`: its turn reads as far as its record goes. It is not a turn log: an append is refused, and
`fuseforks import` is the way to add a stream's turns to a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fuseforks.core.errors import StoreError
from fuseforks.events.codec import Envelope
from fuseforks.stores.jsonl import group_turns, read_stream
from fuseforks.stores.store import Record, TurnInfo


class StreamRecord(Record):
    """The turns of the JSON Lines stream at `path`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        self._notices: list[str] = []
        self._turns = group_turns(read_stream(self.path, on_cut=self._notices.append))

    def notices(self) -> list[str]:
        """A last line cut short, said once: the turns are read as far as the whole lines go."""
        return list(self._notices)

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        return [e for e in self._turns.get(turn_id, []) if e.seq > after]

    def turns(self) -> list[TurnInfo]:
        infos = [
            TurnInfo(turn_id=turn_id, events=len(events), first_at=min(e.at for e in events),
                     last_at=max(e.at for e in events))
            for turn_id, events in self._turns.items()
        ]
        return sorted(infos, key=lambda info: (info.first_at, info.turn_id))

    def append(self, envelopes: Sequence[Envelope]) -> None:
        """Refused: a stream is read, never appended to."""
        raise StoreError(f"{self.name}: a JSON Lines stream is read-only; nothing was changed "
                         f"(fuseforks import {self.name} --db STORE adds its turns to a store)")

    def close(self) -> None:
        self._turns = {}
