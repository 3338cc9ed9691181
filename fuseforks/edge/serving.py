"""Serving over HTTP, the same way for the console and the gateway.

- A token guards anything served on an address other machines reach; it is read from the
  environment or a file, never the command line, and must be long enough not to be guessed:
  `check_token` holds both servers to one length.
- The socket is bound before anything is announced, so an address that is printed already
  accepts connections (`--port 0` names the port the system chose).
- uvicorn's own signal handling is left out: the command that serves decides when to stop.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import uvicorn

from fuseforks.core.errors import ConfigError

MIN_TOKEN_LENGTH = 16
"""A bearer token shorter than this is refused: it could be guessed."""


def check_token(token: str) -> str:
    """`token` without surrounding blanks; `ConfigError` when it is too short to be a secret."""
    token = token.strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(f"the token must be at least {MIN_TOKEN_LENGTH} characters long")
    return token


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (an IPv6 address as `::1`, without brackets).

    Made with its protocol named (TCP): asyncio turns Nagle's algorithm off only on connections
    of such a socket, and with it on, each response after the first on a kept-alive connection
    waited for the browser's delayed acknowledgement (40 ms) between its head and its body."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen()
    except BaseException:
        sock.close()
        raise
    return sock


def address(sock: socket.socket) -> str:
    """The URL of what `sock` serves (its root)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


class Listener(uvicorn.Server):
    """uvicorn without its own signal handling (the owner sets `should_exit`), saying once it
    listens (`listening`) and on which port."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = anyio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        self.listening.set()

    @property
    def port(self) -> int:
        """The port it listens on (the one the system chose, for port 0)."""
        return int(self.servers[0].sockets[0].getsockname()[1])
