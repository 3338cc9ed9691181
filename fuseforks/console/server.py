"""Serving the console: one socket, uvicorn, and a clean stop on SIGINT or SIGTERM.

The socket is bound before anything is announced, so the address printed is one that already
accepts connections (`--port 0` picks a free port, which the line then names). uvicorn's own
signal handling is replaced by the console's: a first SIGINT or SIGTERM stops taking requests and
lets the ones in progress finish, a second one stops at once; either way the command exits 0,
like any server asked to stop.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

import anyio
import uvicorn

from fuseforks.console.app import Console
from fuseforks.console.source import RecordSource
from fuseforks.core.hosts import is_loopback_host
from fuseforks.edge.serving import Listener, address

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8470
GRACE_SECONDS = 5


class NeedsToken(ValueError):
    """Serving on an address other hosts can reach, without a token."""


def serve(record: RecordSource, sock: socket.socket, *, token: str | None,
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
    server = Listener(config)

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
