"""Running the gateway: the record, the upstream servers, the MCP server over stdio or HTTP, and
a clean end on SIGINT, SIGTERM or the client's going.

Everything the gateway records goes through the engine's bus, the store as its required
subscriber (a call that cannot be recorded is not sent on), the log file and live traces as the
others. The upstream servers start together; one that does not start is named in each session's
start and its tools are missing, the others serve; a person hears where the gateway records,
which servers started and why any other did not (`start_lines`). A signal stops the gateway
where it waits: the calls still running are cancelled (upstream too), every session records its
end with the signal as its cause, the servers are stopped, and the process exits 130 or 143.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import msgspec
from anyio.abc import TaskGroup
from mcp.server.stdio import stdio_server

from fuseforks.agent.secrets import known_secrets
from fuseforks.bus.bus import Bus, Subscriber
from fuseforks.bus.subscribers import LogWriter, StoreWriter
from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import SessionEndCause
from fuseforks.edge.serving import bind
from fuseforks.events.secrets import Secrets
from fuseforks.events.sequencer import Clock
from fuseforks.events.types import ServerDown
from fuseforks.gateway.http import Listener, http_app, listener, security
from fuseforks.gateway.pins import OFFERING_KINDS, Pins, ToolChange, change_lines, last_offered
from fuseforks.gateway.server import gateway_server
from fuseforks.gateway.sessions import GatewaySettings, SessionBook
from fuseforks.gateway.stdio import answering, stdin_lines
from fuseforks.gateway.upstream import hold
from fuseforks.mcp.config import ServerConfig
from fuseforks.mcp.connection import DEFAULT_CALL_TIMEOUT, DEFAULT_START_TIMEOUT
from fuseforks.mcp.hub import ToolHub
from fuseforks.stores.open import open_store
from fuseforks.stores.store import EventStore
from fuseforks.stores.urls import DatabaseUrl
from fuseforks.traces.live import live_subscriber
from fuseforks.wires.base import Endpoint

logger = logging.getLogger("fuseforks.gateway")
EXIT_CODES: dict[SessionEndCause, int] = {"closed": 0, "cancelled": 1, "SIGINT": 130,
                                          "SIGTERM": 143}
_SIGNALS: dict[signal.Signals, SessionEndCause] = {signal.SIGINT: "SIGINT",
                                                   signal.SIGTERM: "SIGTERM"}


class HttpOptions(msgspec.Struct, frozen=True, kw_only=True):
    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    allow_hosts: list[str] = []
    allow_origins: list[str] = []


class GatewayOptions(msgspec.Struct, frozen=True, kw_only=True):
    servers: list[ServerConfig]
    settings: GatewaySettings
    store: Path | DatabaseUrl
    log: Path | None = None
    http: HttpOptions | None = None
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT


def start_lines(store: Path | DatabaseUrl, started: Sequence[str], faults: Mapping[str, str],
                secrets: Secrets) -> list[str]:
    """What the gateway tells a person once its servers have started: where it records (a
    PostgreSQL URL without its password) and which servers started, then for each server that
    did not, its one-line reason (which names the server). No known secret is in them."""
    line = f"recording to {store}; servers started: {', '.join(started) or 'none'}"
    if faults:
        line += f"; did not start: {', '.join(faults)}"
    return [secrets.text(line),
            *(secrets.text(reason) for reason in faults.values())]


class Gateway:
    """One run of the gateway. `await run()` serves until the client goes or a signal comes,
    and returns the exit code. `on_started(line)` hears the `start_lines` once the servers have
    started, then a line for each tool found changed (`change_lines`: at the start, and when a
    server's list changes while the gateway runs); `on_listening(url)` where an HTTP gateway
    listens."""

    def __init__(self, options: GatewayOptions, *, clock: Clock | None = None,
                 on_started: Callable[[str], None] | None = None,
                 on_listening: Callable[[str], None] | None = None) -> None:
        self.options = options
        self.clock = clock
        self.on_started = on_started
        self.on_listening = on_listening
        self.cause: SessionEndCause = "closed"
        self.book: SessionBook | None = None
        self._listening: Listener | None = None

    async def run(self) -> int:
        options = self.options
        sock: socket.socket | None = None
        if options.http is not None:  # refuse an unsafe or taken address before anything starts
            http = options.http
            security(http.host, http.port, http.allow_hosts, http.allow_origins)
            sock = _bind(http.host, http.port)
        async with AsyncExitStack() as stack:
            if sock is not None:
                stack.enter_context(sock)
            store = open_store(options.store)
            stack.callback(store.close)
            subscribers: list[Subscriber] = []
            if options.log is not None:
                log = LogWriter.to_file(options.log)
                stack.callback(log.close)
                subscribers.append(log)
            tracing = live_subscriber()
            if tracing is not None:
                subscribers.append(tracing)
            secrets = known_secrets(Endpoint(base_url=""), options.servers)
            bus = await stack.enter_async_context(Bus(
                subscribers, required=[StoreWriter(store)], secrets=secrets))

            async def changed(server: str, kind: str) -> None:
                if self.book is not None:
                    await self.book.changed(server, kind)

            hub = await stack.enter_async_context(ToolHub(
                options.servers, call_timeout=options.call_timeout,
                start_timeout=options.start_timeout, on_change=changed,
                restart_after_timeout=True))
            secrets.include(hub.secrets)  # OAuth tokens of the servers, as the hub learns them
            if self.on_started is not None:
                started = [s.name for s in options.servers if s.name not in hub.start_faults]
                for line in start_lines(options.store, started, hub.start_faults, secrets):
                    self.on_started(line)
            pins, found = await self._pins(store, hub)

            def say(line: str) -> None:
                if self.on_started is not None:
                    self.on_started(secrets.text(line))

            for line in change_lines(found, pins.withheld, options.settings.pin):
                say(line)
            down = [ServerDown(server=name, reason=reason)
                    for name, reason in hub.start_faults.items()]
            self.book = SessionBook(hub, options.settings, bus.publish, servers_down=down,
                                    pins=pins, say=say, clock=self.clock)
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch_signals, group)
                    if options.http is None or sock is None:
                        await self._serve_stdio()
                    else:
                        await self._serve_http(options.http, sock)
                    group.cancel_scope.cancel()
            finally:
                with anyio.CancelScope(shield=True):
                    await self.book.end_all(self.cause)
        return EXIT_CODES[self.cause]

    async def _pins(self, store: EventStore, hub: ToolHub) -> tuple[Pins, list[ToolChange]]:
        """The definitions the tools are held to (what this gateway last offered, by the
        record), and the tools whose definition is not that one: with `--pin`, all but the
        approved are kept from clients (`Pins.withheld`), and the hub stops offering them."""
        settings = self.options.settings
        record = await anyio.to_thread.run_sync(store.of_kinds, list(OFFERING_KINDS))
        pins = Pins(last_offered(record, settings.agent), pin=settings.pin,
                    approve=settings.approve)
        return pins, hold(hub, pins, settings.naming)

    async def _watch_signals(self, group: TaskGroup) -> None:
        with anyio.open_signal_receiver(*_SIGNALS) as signals:
            async for signum in signals:
                self.cause = _SIGNALS[signum]
                logger.info("gateway: %s, stopping", self.cause)
                assert self.book is not None
                self.book.ending()
                if self._listening is not None:
                    self._listening.should_exit = True  # uvicorn stops its own way
                else:
                    group.cancel_scope.cancel()
                return

    async def _serve_stdio(self) -> None:
        assert self.book is not None
        server = gateway_server(self.book)
        async with stdin_lines() as lines, stdio_server(stdin=lines) as (read,  # type: ignore[arg-type]
                                                                          write):
            # stdin's end waits for the answers to the requests read (see `answering`)
            reading, writing = answering(read, write, self.options.call_timeout)
            await server.run(reading, writing, server.create_initialization_options())

    async def _serve_http(self, http: HttpOptions, sock: socket.socket) -> None:
        book = self.book
        assert book is not None
        server = gateway_server(book)

        async def deleted(session_id: str) -> None:
            await book.end(f"http:{session_id}", "closed")

        port = http.port
        app = http_app(server, security(http.host, port, http.allow_hosts, http.allow_origins),
                       http.token, deleted)
        listening = self._listening = listener(app, http.host, port)
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: listening.serve(sockets=[sock]))
            await listening.listening.wait()
            if self.on_listening is not None:
                host = f"[{http.host}]" if ":" in http.host else http.host
                self.on_listening(f"http://{host}:{listening.port}/mcp")



def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the store opens: an address that cannot be had (in
    use, not this machine's) ends the command in one line, with nothing recorded."""
    try:
        return bind(host, port)
    except OSError as error:
        reason = os.strerror(error.errno) if error.errno else str(error)
        shown = f"[{host}]" if ":" in host else host
        raise FuseforksError(f"gateway: {reason} ({shown}:{port})") from None
