"""All configured MCP servers behind one object the turn layer calls: list tools, call a tool.

Tool names carry their server as a prefix (`cam__live_view_image`) so two servers may offer tools of
the same name. A call never raises for anything a server does: unknown names, rejected arguments,
crashes, hangs and servers that never started all come back as tool-error `ToolOutput`s with a
one-line `fault`, and the turn goes on. A server whose connection died is restarted on the next call
that needs it, once: if that restart fails too, the server stays down for the rest of the hub's life
and its calls fail at once with the reason.

Starting: each server has `start_timeout` seconds (its configuration's `startTimeout` wins), and a
caller that passes `on_waiting` hears every few seconds which server it is still waiting for.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self

import anyio
import msgspec
from anyio.abc import TaskGroup
from mcp.shared.dispatcher import ProgressFnT
from mcp.types import CallToolResult, TextContent

from fuseforks.core.names import Language, parse_language
from fuseforks.mcp import faults
from fuseforks.mcp.config import ServerConfig, tool_prefix
from fuseforks.mcp.connection import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_START_TIMEOUT,
    MAX_SSE_EVENT_BYTES,
    CallFault,
    Connection,
)
from fuseforks.mcp.links import LINK_READ_SECONDS, read_links
from fuseforks.mcp.render import render_tool_output_async
from fuseforks.ports.tools import ToolOutput, fault_output

logger = logging.getLogger("fuseforks.mcp")
SEPARATOR = "__"
WAITING_INTERVAL = 5.0
"""Seconds between two `on_waiting` reports for a server that has not started yet."""

OnWaiting = Callable[[str, float], None]
"""`on_waiting(server, seconds_waited)`: a server is still starting after that many seconds."""
OnProgress = Callable[[str, float, float | None, str | None], None]
"""`on_progress(tool, progress, total, message)`: a server's progress notification for a call of
the prefixed `tool` (MCP `notifications/progress`)."""


class ToolDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """A tool as the model is offered it: prefixed name, description, JSON input schema."""

    name: str  # "<server>__<tool>"
    description: str
    input_schema: dict[str, Any]
    server: str
    tool: str  # the server's own name for it


class _Server:
    """A connection plus the hub's bookkeeping for it."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.prefix = tool_prefix(connection.name)
        self.down_reason: str | None = None  # set when a restart failed: no more attempts
        self.needs_restart = False
        self.lock = anyio.Lock()


class ToolHub(anyio.AsyncContextManagerMixin):
    """Async context manager: starts every server on enter (concurrently), stops them on exit.

    The hub's task group (each connection runs in a task of it) lives exactly as long as the
    `async with` block, so the hub is entered and left by the same task, like any task group.
    """

    def __init__(
        self,
        servers: Sequence[ServerConfig],
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        max_event_bytes: int = MAX_SSE_EVENT_BYTES,
        on_waiting: OnWaiting | None = None,
        waiting_interval: float = WAITING_INTERVAL,
        link_seconds: float = LINK_READ_SECONDS,
        on_progress: OnProgress | None = None,
    ) -> None:
        """`start_timeout`: seconds each server has to start, unless its configuration gives its
        own `startTimeout`. `on_waiting(server, seconds_waited)` is called every
        `waiting_interval` seconds while a server is still starting (at the hub's start and at a
        restart), so a caller can say what it is waiting for; it must not block."""
        self._servers = [
            _Server(
                Connection(
                    config,
                    start_timeout=start_timeout,
                    call_timeout=call_timeout,
                    max_event_bytes=max_event_bytes,
                )
            )
            for config in servers
        ]
        self._task_group: TaskGroup | None = None
        self._on_waiting = on_waiting
        self._waiting_interval = waiting_interval
        self._link_seconds = link_seconds
        self.on_progress = on_progress
        """Hears every server's progress notifications (may be set after the hub starts)."""
        self.start_faults: dict[str, str] = {}  # server name -> why it did not start

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        async with anyio.create_task_group() as group:
            self._task_group = group
            try:
                async with anyio.create_task_group() as starters:
                    for server in self._servers:
                        starters.start_soon(self._start, server)
                yield self
            finally:
                self._task_group = None
                with anyio.CancelScope(shield=True):
                    async with anyio.create_task_group() as stoppers:
                        for server in self._servers:
                            stoppers.start_soon(server.connection.stop)

    async def _start(self, server: _Server) -> str | None:
        assert self._task_group is not None, "use the hub inside `async with`"
        async with anyio.create_task_group() as reporter:
            if self._on_waiting is not None:
                reporter.start_soon(self._report_waiting, server.connection.name)
            reason = await server.connection.start(self._task_group)
            reporter.cancel_scope.cancel()
        server.needs_restart = reason is not None
        if reason is None:
            self.start_faults.pop(server.connection.name, None)
        else:
            self.start_faults[server.connection.name] = reason
            logger.warning("mcp fault: server=%s reason=%s", server.connection.name, reason)
        return reason

    async def _report_waiting(self, name: str) -> None:
        """Call `on_waiting` at each whole interval of waiting (1 x, 2 x, ...), until cancelled."""
        assert self._on_waiting is not None
        started = anyio.current_time()
        for tick in itertools.count(1):
            waited = round(tick * self._waiting_interval, 3)
            await anyio.sleep_until(started + waited)
            try:
                self._on_waiting(name, waited)
            except Exception:  # a progress report must never cost the server its start
                logger.warning("mcp on_waiting failed: server=%s", name, exc_info=True)
                return

    def transports(self) -> dict[str, str]:
        """Server name -> the transport its session runs over (`stdio`, `http`, `sse`): a URL
        configured for streamable HTTP may have fallen back to HTTP+SSE."""
        return {s.connection.name: s.connection.transport for s in self._servers
                if s.connection.transport is not None}

    def list_tools(self) -> list[ToolDefinition]:
        """Tools of every connected server, prefixed, in configuration then server order."""
        return [
            ToolDefinition(
                name=f"{server.prefix}{SEPARATOR}{tool.name}",
                description=tool.description or "",
                input_schema=dict(tool.input_schema),
                server=server.connection.name,
                tool=tool.name,
            )
            for server in self._servers
            if server.connection.connected
            for tool in server.connection.tools
        ]

    def _resolve(self, name: str) -> tuple[_Server, str] | None:
        matches = [
            (server, name[len(server.prefix) + len(SEPARATOR) :])
            for server in self._servers
            if name.startswith(server.prefix + SEPARATOR)
        ]
        if not matches:
            return None
        return max(matches, key=lambda match: len(match[0].prefix))

    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        """Call a prefixed tool; every failure is a tool-error output, never an exception."""
        parse_language(language)  # an unknown language is the caller's bug: fail before any server
        resolved = self._resolve(name)
        if resolved is None:
            return self._fault(name, faults.unknown_tool(name), language)
        server, tool = resolved
        unavailable = await self._ensure_running(server)
        if unavailable is not None:
            return self._fault(name, unavailable, language)
        if not any(listed.name == tool for listed in server.connection.tools):
            return self._fault(name, faults.unknown_tool(name), language)
        outcome = await server.connection.call(tool, arguments, self._progress_of(name))
        if isinstance(outcome, CallFault):
            server.needs_restart = server.needs_restart or outcome.dead
            return self._fault(name, outcome.reason, language)
        return await self._render(outcome, language, server.connection)

    def _progress_of(self, name: str) -> ProgressFnT | None:
        listener = self.on_progress
        if listener is None:
            return None

        async def heard(progress: float, total: float | None, message: str | None) -> None:
            try:
                listener(name, progress, total, message)
            except Exception:  # a progress report must never cost the call
                logger.warning("mcp on_progress failed: tool=%s", name, exc_info=True)

        return heard

    async def _ensure_running(self, server: _Server) -> str | None:
        """None when the server can take a call; else why not (restarting it once if it died)."""
        async with server.lock:
            if server.down_reason is not None:
                return server.down_reason
            if not server.needs_restart and server.connection.connected:
                return None
            logger.info("mcp restart: server=%s", server.connection.name)
            reason = await self._start(server)
            if reason is not None:
                server.down_reason = faults.down_after_restart(server.connection.name, reason)
                return reason
            return None

    async def _render(self, result: CallToolResult, language: Language,
                      connection: Connection) -> ToolOutput:
        content = list(result.content)
        if not content and result.structured_content is not None:
            # The spec asks servers to repeat structured results as text; when one does not,
            # the model still gets the value (as compact JSON, keys sorted) rather than nothing.
            text = msgspec.json.encode(result.structured_content, order="sorted").decode()
            content = [TextContent(type="text", text=text)]
        reader = connection.read_resource if connection.serves_resources else None
        content, reads = await read_links(content, reader, language,
                                          seconds=self._link_seconds)
        return await render_tool_output_async(content, result.is_error, language, reads)

    def _fault(self, name: str, reason: str, language: Language) -> ToolOutput:
        logger.warning("mcp fault: tool=%s reason=%s", name, reason)
        return fault_output(reason, language)
