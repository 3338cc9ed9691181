"""Serving the console: one socket, uvicorn, and a clean stop on SIGINT or SIGTERM.

The socket is bound before anything is announced, so the address printed is one that already
accepts connections (`--port 0` picks a free port, which the line then names). uvicorn's own
signal handling is replaced by the console's: a first SIGINT or SIGTERM stops taking requests and
lets the ones in progress finish, a second one stops at once; either way the command exits 0,
like any server asked to stop.
"""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Callable, Iterator

import anyio
import uvicorn

from fuseforks.console.app import Console
from fuseforks.console.record import Record
from fuseforks.core.hosts import is_loopback_host

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8470
GRACE_SECONDS = 5


class NeedsToken(ValueError):
    """Serving on an address other hosts can reach, without a token."""


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the console watches the signals itself (`serve`)


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
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(record: Record, sock: socket.socket, *, token: str | None,
          announce: Callable[[str], None]) -> None:
    """Serve the console on `sock` until SIGINT or SIGTERM. `token`: required on every request;
    without one the socket must be bound to a loopback address."""
    host = sock.getsockname()[0]
    if token is None and not is_loopback_host(host):
        raise NeedsToken(host)
    console = Console(record)
    app = console.app(token=token, loopback_only=is_loopback_host(host))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=GRACE_SECONDS, server_header=False)
    server = _Server(config)

    async def main() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as group:
                async def stop_on_signal() -> None:
                    async for _ in signals:
                        if server.should_exit:
                            server.force_exit = True
                        server.should_exit = True

                group.start_soon(stop_on_signal)
                announce(f"console: serving {record.location} on {address(sock)}")
                await server.serve(sockets=[sock])
                group.cancel_scope.cancel()

    anyio.run(main)
