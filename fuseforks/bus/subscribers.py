"""Subscribers that ship with the engine: the store writer and the log writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio

from fuseforks.bus.bus import Batch
from fuseforks.events.types import TurnEnded
from fuseforks.projections.log import LogState, evolve_log, short_turn_id
from fuseforks.stores.store import TurnLog


class StoreWriter:
    """Appends each batch (the events up to a side effect) to the store as one transaction: on
    the event loop when the store can commit without waiting (`TurnLog.append_now`), else in a
    worker thread. Pass it as a required subscriber: then a batch is durable when `publish`
    returns."""

    name = "event store"

    def __init__(self, store: TurnLog) -> None:
        self.store = store

    async def handle(self, batch: Batch) -> None:
        if not self.store.append_now(batch):
            await anyio.to_thread.run_sync(self.store.append, batch)


class LogWriter:
    """Folds the log projection per turn and writes each new line as it appears."""

    name = "log"

    def __init__(self, sink: Callable[[str], None], on_close: Callable[[], None] | None = None,
                 *, name_turns: bool = False) -> None:
        """`name_turns`: begin each line with its turn's short id, for a reader of many turns at
        once (`log --follow`); the `fuseforks.log` file's lines stay as they are."""
        self.sink = sink
        self._on_close = on_close
        self._name_turns = name_turns
        self._states: dict[str, LogState] = {}

    @classmethod
    def to_file(cls, path: str | Path) -> LogWriter:
        """Append lines to `path` (the `fuseforks.log` file), flushed line by line."""
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

        def write(line: str) -> None:
            handle.write(line + "\n")
            handle.flush()

        return cls(write, handle.close)

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()

    async def handle(self, batch: Batch) -> None:
        for envelope in batch:
            state = self._states.get(envelope.turn_id, LogState())
            before = len(state.lines)
            state = evolve_log(state, envelope.event)
            prefix = f"{short_turn_id(envelope.turn_id)} " if self._name_turns else ""
            for line in state.lines[before:]:
                self.sink(prefix + line)
            if isinstance(envelope.event, TurnEnded):
                self._states.pop(envelope.turn_id, None)  # nothing follows a turn's end
            else:
                self._states[envelope.turn_id] = state

    @property
    def open_turns(self) -> int:
        """Turns begun and not yet ended (the writer keeps context only for these)."""
        return len(self._states)
