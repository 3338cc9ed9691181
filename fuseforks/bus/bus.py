"""The message bus: the engine publishes batches of envelopes; each subscriber consumes in order.

One anyio memory object stream per subscriber, zero buffer by default — so a slow subscriber holds
the publisher back (backpressure) instead of letting memory grow. A subscriber that raises is cut
off and recorded in `failures`; the others, the store writer among them, keep what they had and go
on. Leaving the `async with` closes every stream, which ends every subscriber cleanly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import TracebackType
from typing import Protocol

import anyio
import msgspec
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from fuseforks.events.codec import Envelope

Batch = Sequence[Envelope]


class Subscriber(Protocol):
    name: str

    async def handle(self, batch: Batch) -> None: ...


class SubscriberFailure(msgspec.Struct, frozen=True):
    subscriber: str
    error: str
    last_seq_handled: int


class Bus:
    def __init__(self, subscribers: Sequence[Subscriber], *, buffer: float = 0) -> None:
        if buffer < 0 or (buffer != math.inf and int(buffer) != buffer):
            raise ValueError("buffer must be a whole number >= 0 or math.inf")
        self._subscribers = list(subscribers)
        self._buffer = buffer
        self._senders: list[tuple[Subscriber, MemoryObjectSendStream[Batch]]] = []
        self._group: TaskGroup | None = None
        self.failures: list[SubscriberFailure] = []

    async def __aenter__(self) -> Bus:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        for subscriber in self._subscribers:
            send, receive = anyio.create_memory_object_stream[Batch](self._buffer)
            self._senders.append((subscriber, send))
            self._group.start_soon(self._consume, subscriber, receive)
        return self

    async def publish(self, batch: Batch) -> None:
        """Hand `batch` to every live subscriber, in subscription order."""
        for subscriber, send in list(self._senders):
            try:
                await send.send(batch)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._senders.remove((subscriber, send))
                await send.aclose()

    async def _consume(self, subscriber: Subscriber, receive: MemoryObjectReceiveStream[Batch]) -> None:
        last_seq = 0
        async with receive:
            async for batch in receive:
                try:
                    await subscriber.handle(batch)
                except Exception as error:
                    self.failures.append(
                        SubscriberFailure(subscriber.name, f"{type(error).__name__}: {error}", last_seq)
                    )
                    return
                if batch:
                    last_seq = batch[-1].seq

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        for _, send in self._senders:
            await send.aclose()
        self._senders.clear()
        assert self._group is not None
        return await self._group.__aexit__(exc_type, exc, tb)
