"""The message bus: the engine publishes batches of envelopes; each subscriber consumes in order.

Two kinds of subscriber. A *required* one (the store writer) is the record: `publish` hands it the
batch itself and returns only when it has handled it, so a commit is durable before the engine's
next side effect; if it fails, `publish` raises `RecordingFailed` and the turn stops — nothing
claims success for a turn that is not recorded. Every other subscriber (log file, console) gets
one anyio memory object stream, zero buffer by default, so a slow one holds the publisher back
(backpressure) instead of letting memory grow. One that raises is cut off, recorded in `failures`
and reported once through `on_failure`; the turn goes on. Leaving the `async with` closes every
stream, which ends every subscriber cleanly.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from fuseforks.core.errors import ConfigError, RecordingFailed
from fuseforks.events.codec import Envelope
from fuseforks.events.secrets import Secrets

Batch = Sequence[Envelope]


class Subscriber(Protocol):
    name: str

    async def handle(self, batch: Batch) -> None: ...


class SubscriberFailure(msgspec.Struct, frozen=True):
    subscriber: str
    error: str
    last_seq_handled: int


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


class Bus(anyio.AsyncContextManagerMixin):
    def __init__(
        self,
        subscribers: Sequence[Subscriber],
        *,
        required: Sequence[Subscriber] = (),
        buffer: float = 0,
        on_failure: Callable[[SubscriberFailure], None] | None = None,
        secrets: Secrets | None = None,
    ) -> None:
        """`secrets`: values no subscriber may see (a key pasted into a request, echoed by a
        tool or a provider), each replaced by a marker in every batch before it is handed on."""
        if buffer < 0 or (buffer != math.inf and int(buffer) != buffer):
            raise ConfigError("buffer must be a whole number >= 0 or math.inf")
        self._subscribers = list(subscribers)
        self._required = list(required)
        self._buffer = buffer
        self._on_failure = on_failure
        self._secrets = secrets if secrets is not None else Secrets()  # one that learns later
        self._senders: list[tuple[Subscriber, MemoryObjectSendStream[Batch]]] = []
        self.failures: list[SubscriberFailure] = []
        self._broken: dict[str, RecordingFailed] = {}
        """Turns whose record failed: none of their later batches is recorded (it would leave a
        gap). Other turns go on: a store that was away for a moment takes their batches again."""

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncIterator[Bus]:
        async with anyio.create_task_group() as group:
            for subscriber in self._subscribers:
                send, receive = anyio.create_memory_object_stream[Batch](self._buffer)
                self._senders.append((subscriber, send))
                group.start_soon(self._consume, subscriber, receive)
            try:
                yield self
            finally:
                for _, send in self._senders:
                    await send.aclose()
                self._senders.clear()

    async def publish(self, batch: Batch) -> None:
        """Record `batch` with every required subscriber, then hand it to the others in order.

        Raises `RecordingFailed` when a required subscriber failed, now or on an earlier batch
        of the same turn."""
        turn_id = batch[0].turn_id if batch else ""
        if (broken := self._broken.get(turn_id)) is not None:
            raise broken
        batch = self._secrets.batch(batch)
        for subscriber in self._required:
            try:
                await subscriber.handle(batch)
            except Exception as error:
                self.failures.append(SubscriberFailure(
                    subscriber.name, _describe(error), batch[0].seq - 1 if batch else 0))
                broken = self._broken[turn_id] = RecordingFailed(f"{subscriber.name}: {error}")
                raise broken from error
        for subscriber, send in list(self._senders):
            try:
                await send.send(batch)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._senders.remove((subscriber, send))
                await send.aclose()

    def forget(self, turn_id: str) -> None:
        """Record `turn_id` again: it is continued from what its record holds (a takeover)."""
        self._broken.pop(turn_id, None)

    def _fail(self, subscriber: Subscriber, error: BaseException, last_seq: int) -> None:
        failure = SubscriberFailure(subscriber.name, _describe(error), last_seq)
        self.failures.append(failure)
        if self._on_failure is not None:
            self._on_failure(failure)

    async def _consume(self, subscriber: Subscriber, receive: MemoryObjectReceiveStream[Batch]) -> None:
        last_seq = 0
        async with receive:
            async for batch in receive:
                try:
                    await subscriber.handle(batch)
                except Exception as error:
                    self._fail(subscriber, error, last_seq)
                    return
                if batch:
                    last_seq = batch[-1].seq
