"""Reading the client's requests from stdin without a thread, so a signal can stop the gateway.

The SDK's stdio transport reads stdin in a worker thread; a thread blocked in `read` cannot be
cancelled, so a SIGTERM while the client keeps its pipe open would wait for the client's next
line. Here stdin is read the way a socket is: wait until it is readable, read what is there
(non-blocking). Stdin that is not a pipe, a socket or a terminal (a regular file, `/dev/null`)
has no readiness to wait for — the event loop refuses to watch it — and is read in a thread as
the SDK does: such a file ends by itself, so the read never blocks for long.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread

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
