"""Reading the client's requests from stdin without a thread, so a signal can stop the gateway.

The SDK's stdio transport reads stdin in a worker thread; a thread blocked in `read` cannot be
cancelled, so a SIGTERM while the client keeps its pipe open would wait for the client's next
line. Here stdin is read the way a socket is: wait until it is readable, read what is there
(non-blocking). Stdin that is not a pipe, a socket or a terminal (a regular file, `/dev/null`)
has no readiness to wait for — the event loop refuses to watch it — and is read in a thread as
the SDK does: such a file ends by itself, so the read never blocks for long.

When stdin ends, the SDK's server cancels the requests still being handled, so a client that
writes its requests and closes its side (a file, `printf ... |`) would get only the first answer.
`answering` lets the server see the end only once every request read has been answered, or
after a grace (the call timeout): a request the client cancelled is not waited for.
"""

from __future__ import annotations

import codecs
import contextvars
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import anyio.to_thread
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

_CHUNK = 1 << 16


class StdinLines:
    """Async iterator of the lines of a file descriptor (UTF-8, undecodable bytes replaced)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.waitable = _waitable(fd)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _read(self) -> bytes:
        if not self.waitable:
            return await anyio.to_thread.run_sync(os.read, self.fd, _CHUNK)
        while True:
            await anyio.wait_readable(self.fd)
            try:
                return os.read(self.fd, _CHUNK)
            except BlockingIOError:
                continue  # woken without data (another reader took it): wait again

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            chunk = await self._read()
            if not chunk:
                tail = self._pending + self._decoder.decode(b"", final=True)
                if tail:
                    yield tail
                return
            self._pending += self._decoder.decode(chunk)
            *lines, self._pending = self._pending.split("\n")
            for line in lines:
                yield line + "\n"


def _waitable(fd: int) -> bool:
    """Whether the event loop can wait for `fd` to be readable: a pipe, a socket, a terminal."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


@asynccontextmanager
async def stdin_lines(fd: int = 0) -> AsyncIterator[StdinLines]:
    """The lines of `fd` (stdin), read without blocking; its blocking mode is restored after."""
    blocking = os.get_blocking(fd)
    reader = StdinLines(fd)
    if reader.waitable:
        os.set_blocking(fd, False)
    try:
        yield reader
    finally:
        os.set_blocking(fd, blocking)


Incoming = SessionMessage | Exception


class _Receiving(Protocol):
    async def receive(self) -> Incoming: ...
    async def aclose(self) -> None: ...


class _Sending(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...
    async def aclose(self) -> None: ...


class InFlight:
    """The ids of the client's requests read and not answered yet."""

    def __init__(self) -> None:
        self.open: set[Any] = set()
        self._changed = anyio.Event()

    def read(self, item: Incoming) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, JSONRPCRequest):
            self.open.add(message.id)
        elif (isinstance(message, JSONRPCNotification)
              and message.method == "notifications/cancelled" and message.params):
            self._settle(message.params.get("requestId"))  # the SDK does not answer it

    def written(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._settle(item.message.id)

    def _settle(self, request_id: Any) -> None:
        self.open.discard(request_id)
        self._changed.set()
        self._changed = anyio.Event()

    async def settled(self, grace: float) -> None:
        """Until every request read is answered, `grace` seconds at most."""
        with anyio.move_on_after(grace):
            while self.open:
                await self._changed.wait()


class _Wrapped:
    """A stream of the transport's, wrapped: closing it closes the transport's."""

    inner: _Receiving | _Sending

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


class _Reading(_Wrapped):
    """The transport's read stream, whose end waits for the requests read to be answered."""

    inner: _Receiving

    def __init__(self, inner: _Receiving, in_flight: InFlight, grace: float) -> None:
        self.inner = inner
        self.in_flight = in_flight
        self.grace = grace

    @property
    def last_context(self) -> contextvars.Context | None:
        context: contextvars.Context | None = getattr(self.inner, "last_context", None)
        return context

    async def receive(self) -> Incoming:
        try:
            item = await self.inner.receive()
        except anyio.EndOfStream:
            await self.in_flight.settled(self.grace)
            raise
        self.in_flight.read(item)
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None



class _Writing(_Wrapped):
    """The transport's write stream, telling `InFlight` of every answer sent."""

    inner: _Sending

    def __init__(self, inner: _Sending, in_flight: InFlight) -> None:
        self.inner = inner
        self.in_flight = in_flight

    async def send(self, item: SessionMessage, /) -> None:
        await self.inner.send(item)
        self.in_flight.written(item)



def answering(read: _Receiving, write: _Sending, grace: float) -> tuple[_Reading, _Writing]:
    """`read` and `write` for the server, the end of `read` held back until the requests read
    are answered (`grace` seconds at most)."""
    in_flight = InFlight()
    return _Reading(read, in_flight, grace), _Writing(write, in_flight)
