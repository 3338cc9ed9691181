"""SIGINT and SIGTERM become a recorded interruption of the running turn, and an exit code.

While a turn runs, a signal calls `Turn.interrupt`: the turn records `TurnInterrupted` and its end,
the MCP servers are stopped cleanly on the way out, and the command exits 130 (SIGINT) or 143
(SIGTERM), the shell's own numbers for a process stopped by those signals. A signal before the
turn has started (while MCP servers start) stops the command the same way; nothing is recorded,
because nothing was sent.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

import anyio

from fuseforks.core.names import InterruptCause

EXIT_CODES: dict[InterruptCause, int] = {"SIGINT": 130, "SIGTERM": 143}
_CAUSES: dict[int, InterruptCause] = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


class Interruptible(Protocol):
    def interrupt(self, cause: InterruptCause = "cancelled") -> object: ...


class Interrupts:
    def __init__(self) -> None:
        self.cause: InterruptCause | None = None
        self.scope = anyio.CancelScope()
        """Cancelled by a signal that arrives while no turn is attached."""
        self._turn: Interruptible | None = None

    def attach(self, turn: Interruptible) -> None:
        self._turn = turn
        if self.cause is not None:
            turn.interrupt(self.cause)

    def detach(self) -> None:
        self._turn = None

    @property
    def exit_code(self) -> int | None:
        return EXIT_CODES[self.cause] if self.cause is not None else None

    @asynccontextmanager
    async def watching(self) -> AsyncIterator[Interrupts]:
        async with anyio.create_task_group() as group:
            await group.start(self._watch)
            try:
                yield self
            finally:
                group.cancel_scope.cancel()

    async def _watch(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for signum in signals:
                if self.cause is None:
                    self.cause = _CAUSES[signum]
                if self._turn is not None:
                    self._turn.interrupt(self.cause)
                else:
                    self.scope.cancel()
