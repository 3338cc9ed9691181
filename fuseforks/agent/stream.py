"""`Agent.stream`: a turn whose answer is read as it arrives, and whose result comes at the end."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from types import TracebackType

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from fuseforks.agent.result import TurnResult
from fuseforks.ports.model import OnText, TextDelta

RunTurn = Callable[[OnText], Awaitable[TurnResult]]


class TurnStream:
    """One turn running while its text is read: an async context manager and, inside it, an
    async iterator of `TextDelta`s.

        async with agent.stream("Describe the picture.") as turn:
            async for delta in turn:
                print(delta.text, end="", flush=True)
        print(turn.result.usage)

    Entering starts the turn; iterating yields each piece of text of every model call of the
    turn as it arrives (tool rounds included: `delta.round` and `delta.purpose` say which call,
    and a delta whose `attempt` is higher than the one before restarts that call's text after a
    cut stream); the iteration ends when the turn has ended. `result` is the `TurnResult` from
    then on. Leaving the block waits for the turn to end; leaving it with an exception (or being
    cancelled) interrupts the turn, which records it. `RecordingFailed` is raised where `run`
    would raise it: from the iteration, or on leaving the block.
    """

    def __init__(self, run: RunTurn) -> None:
        self._run = run
        self._result: TurnResult | None = None
        self._error: Exception | None = None
        self._group: TaskGroup | None = None
        self._send: MemoryObjectSendStream[TextDelta] | None = None
        self._receive: MemoryObjectReceiveStream[TextDelta] | None = None

    @property
    def result(self) -> TurnResult:
        """The turn's result, once it has ended."""
        if self._result is None:
            raise RuntimeError("the turn has not ended yet: read the stream to its end first")
        return self._result

    async def __aenter__(self) -> TurnStream:
        # Unbounded: a slow reader never holds the provider's stream back (the text of one turn
        # is small).
        self._send, self._receive = anyio.create_memory_object_stream[TextDelta](math.inf)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._turn, self._send)
        return self

    async def _turn(self, send: MemoryObjectSendStream[TextDelta]) -> None:
        with send:
            try:
                self._result = await self._run(send.send_nowait)
            except Exception as error:  # handed to the reader, unwrapped
                self._error = error

    def __aiter__(self) -> TurnStream:
        return self

    async def __anext__(self) -> TextDelta:
        if self._receive is None:
            raise RuntimeError("use the stream inside `async with agent.stream(...) as turn:`")
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            if self._error is not None:
                error, self._error = self._error, None
                raise error from None
            raise StopAsyncIteration from None

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> bool | None:
        assert self._group is not None and self._receive is not None
        if error is not None:
            self._group.cancel_scope.cancel()  # the turn records its interruption
        try:
            # The block's own exception is not handed to the task group, which would wrap it in
            # an exception group: it goes on as itself once the turn has stopped.
            await self._group.__aexit__(None, None, None)
        finally:
            self._receive.close()
        if error is None and self._error is not None:  # the turn failed and was not read to its end
            failure, self._error = self._error, None
            raise failure
        return None
