"""All configured MCP servers behind one object the turn layer calls: list tools, call a tool.

Tool names carry their server as a prefix (`cam__live_view_image`) so two servers may offer tools of
the same name. A call never raises for anything a server does: unknown names, rejected arguments,
crashes, hangs and servers that never started all come back as tool-error `ToolOutput`s with a
one-line `fault`, and the turn goes on. A server whose connection died is restarted on the next call
that needs it, once: if that restart fails too, the server stays down for the rest of the hub's life
and its calls fail at once with the reason — except a server that wants a login (OAuth), which
each call tries again, so a login a person makes meanwhile is taken up.

A server's `tools` allow and deny lists (`fuseforks.mcp.config.ToolFilter`) apply here, so the
gateway and an agent alike see only the tools they let through: the others are not listed, and a
call to one is refused as a call to an unknown tool, before its server is asked anything.

Starting: each server has `start_timeout` seconds (its configuration's `startTimeout` wins), and a
caller that passes `on_waiting` hears every few seconds which server it is still waiting for.

For the gateway, which passes whole servers through: `call_result` returns a server's own result
(not rendered for a model), `on_change` hears when a server's lists changed, the servers'
resources and prompts are reached through `fuseforks.mcp.catalog`, and a server whose call timed
out can be restarted before the next call (`restart_after_timeout`: a gateway lives long, and a
server that hung once may hang for every later call).
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self, TypeVar

import anyio
import msgspec
from anyio.abc import TaskGroup
from mcp import Client
from mcp.shared.dispatcher import ProgressFnT
from mcp.types import CallToolResult, ContentBlock, ReadResourceResult, TextContent, Tool

from fuseforks.core.errors import McpUnavailable
from fuseforks.core.media import ENGINE_LIMITS
from fuseforks.core.names import Language, parse_language
from fuseforks.events.secrets import Secrets
from fuseforks.mcp import faults
from fuseforks.mcp.config import HttpServer, ServerConfig, oauth_mode, tool_prefix
from fuseforks.mcp.connection import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_START_TIMEOUT,
    MAX_SSE_EVENT_BYTES,
    CallFault,
    Connection,
    OnChange,
)
from fuseforks.mcp.links import LINK_READ_SECONDS, read_links
from fuseforks.mcp.oauth import Person, ServerAuth
from fuseforks.mcp.plan import plan_for_model
from fuseforks.mcp.tokens import TokenFiles
from fuseforks.ports.tools import ToolOutput, fault_output

logger = logging.getLogger("fuseforks.mcp")
_T = TypeVar("_T")
SEPARATOR = "__"
WAITING_INTERVAL = 5.0
"""Seconds between two `on_waiting` reports for a server that has not started yet."""

OnWaiting = Callable[[str, float], None]
"""`on_waiting(server, seconds_waited)`: a server is still starting after that many seconds."""
OnProgress = Callable[[str, float, float | None, str | None], None]
"""`on_progress(tool, progress, total, message)`: a server's progress notification for a call of
the prefixed `tool` (MCP `notifications/progress`)."""


def result_content(result: CallToolResult) -> list[ContentBlock]:
    """A result's content as a model reads it. The spec asks servers to repeat a structured
    result as text; when one does not, the model still gets the value (as compact JSON, keys
    sorted) rather than nothing."""
    content = list(result.content)
    if not content and result.structured_content is not None:
        text = msgspec.json.encode(result.structured_content, order="sorted").decode()
        content = [TextContent(type="text", text=text)]
    return content


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
        self.lock = anyio.Lock(fast_acquire=True)

    @property
    def tools(self) -> list[Tool]:
        """The server's tools its configuration's allow and deny lists let through."""
        allowed = self.connection.config.tools
        return [tool for tool in self.connection.tools if allowed.allows(tool.name)]


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
        on_change: OnChange | None = None,
        restart_after_timeout: bool = False,
        tokens: TokenFiles | None = None,
        person: Person | None = None,
    ) -> None:
        """`start_timeout`: seconds each server has to start, unless its configuration gives its
        own `startTimeout`. `on_waiting(server, seconds_waited)` is called every
        `waiting_interval` seconds while a server is still starting (at the hub's start and at a
        restart), so a caller can say what it is waiting for; it must not block.
        `on_change(server, kind)` is awaited when a server's tools, resources or prompts changed.
        `restart_after_timeout`: a call that timed out restarts its server before the next.

        Servers behind OAuth use the logins kept in `tokens` (the user's token folder by
        default); only with a `person` (a login) is anyone asked to authorize. Every token the
        hub comes to know is in `secrets`, for the record to keep out."""
        self.secrets = Secrets()
        """What the hub's servers' logins hold (tokens, client secrets, codes), learnt as they
        are: an agent's or a gateway's own `Secrets` include it."""
        files = tokens if tokens is not None else TokenFiles()
        self._servers = [
            _Server(
                Connection(
                    config,
                    start_timeout=start_timeout,
                    call_timeout=call_timeout,
                    max_event_bytes=max_event_bytes,
                    on_change=on_change,
                    auth=self._auth(config, files, person),
                )
            )
            for config in servers
        ]
        self._restart_after_timeout = restart_after_timeout
        self._on_change = on_change
        self._task_group: TaskGroup | None = None
        self._on_waiting = on_waiting
        self._waiting_interval = waiting_interval
        self._link_seconds = link_seconds
        self.on_progress = on_progress
        """Hears every server's progress notifications (may be set after the hub starts)."""
        self.withheld: frozenset[str] = frozenset()
        """Prefixed tools kept from whoever uses the hub (a gateway's pinned tools whose
        definition changed): not listed, and a call to one is refused as an unknown tool's."""
        self.start_faults: dict[str, str] = {}  # server name -> why it did not start

    def _auth(self, config: ServerConfig, files: TokenFiles,
              person: Person | None) -> ServerAuth | None:
        if not isinstance(config, HttpServer):
            return None
        if person is None and oauth_mode(config) is None:
            return None
        return ServerAuth(config, files, secrets=self.secrets, person=person)

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

    @property
    def configs(self) -> list[ServerConfig]:
        """The configuration of every server of the hub."""
        return [server.connection.config for server in self._servers]

    def list_tools(self, *, withheld: bool = False) -> list[ToolDefinition]:
        """Tools of every connected server, prefixed, in configuration then server order; with
        `withheld`, the tools the hub withholds too (what the servers offer)."""
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
            for tool in server.tools
            if withheld or f"{server.prefix}{SEPARATOR}{tool.name}" not in self.withheld
        ]

    def listed_tools(self) -> list[tuple[str, Tool]]:
        """(prefixed name, the server's own `Tool` with all it declares) of every tool, in the
        order of `list_tools`."""
        return [(f"{server.prefix}{SEPARATOR}{tool.name}", tool)
                for server in self._servers if server.connection.connected
                for tool in server.tools
                if f"{server.prefix}{SEPARATOR}{tool.name}" not in self.withheld]

    def connected(self) -> list[tuple[str, str, Connection]]:
        """(name, prefix, connection) of every server running now, in configuration order."""
        return [(server.connection.name, server.prefix, server.connection)
                for server in self._servers if server.connection.connected]

    def resolve(self, name: str) -> tuple[str, str] | None:
        """The server and its own name for a prefixed name (a tool's or a prompt's), or None."""
        resolved = self._resolve(name)
        return None if resolved is None else (resolved[0].connection.name, resolved[1])

    async def connection(self, server_name: str) -> Connection | str:
        """The server's connection ready for a request (restarted first if it died), or why it
        cannot take one."""
        server = next(s for s in self._servers if s.connection.name == server_name)
        unavailable = await self._ensure_running(server)
        return server.connection if unavailable is None else unavailable

    def note_fault(self, server_name: str, fault: CallFault) -> None:
        """A request to the server produced no answer: restart it before the next one if the
        connection died (or timed out, with `restart_after_timeout`)."""
        server = next(s for s in self._servers if s.connection.name == server_name)
        restart = fault.dead or (fault.timed_out and self._restart_after_timeout)
        server.needs_restart = server.needs_restart or restart

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
        outcome = await self.call_result(name, arguments, self._progress_of(name))
        if isinstance(outcome, str):
            return fault_output(outcome, language)
        resolved = self._resolve(name)
        return await self._render(outcome, language, resolved[0].connection if resolved else None)

    async def call_result(self, name: str, arguments: dict[str, Any],
                          on_progress: ProgressFnT | None = None) -> CallToolResult | str:
        """Call a prefixed tool: the server's own result, or the one-line reason there is none
        (unknown tool, server down, crash, timeout, garbage). Never raises. `on_progress` hears
        the server's progress notifications for the call."""
        resolved = self._resolve(name)
        if resolved is None or name in self.withheld:
            return self._faulted(name, faults.unknown_tool(name))
        server, tool = resolved
        if not server.connection.config.tools.allows(tool):
            return self._faulted(name, faults.unknown_tool(name))
        unavailable = await self._ensure_running(server)
        if unavailable is not None:
            return self._faulted(name, unavailable)
        if name in self.withheld:  # withheld by the check a restart just made
            return self._faulted(name, faults.unknown_tool(name))
        if not any(listed.name == tool for listed in server.connection.tools):
            return self._faulted(name, faults.unknown_tool(name))
        outcome = await server.connection.call(tool, arguments, on_progress)
        if isinstance(outcome, CallFault):
            self.note_fault(server.connection.name, outcome)
            return self._faulted(name, outcome.reason)
        return outcome

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
                if not server.connection.awaits_login:  # a login may be made meanwhile
                    server.down_reason = faults.down_after_restart(server.connection.name, reason)
                return reason
        # started again: its tools are there now (a login), or may not be the ones it had (a
        # server that died and came back changed), so whoever listens checks them again
        if self._on_change is not None:
            try:
                await self._on_change(server.connection.name, "tools")
            except Exception:  # a listener must never cost the server its start
                logger.warning("mcp on_change failed: server=%s", server.connection.name,
                               exc_info=True)
        return None

    async def take_up_logins(self) -> None:
        """Start again each server that wants a login, once one has been kept for it since:
        a person logged in while this hub ran (before a turn, or a client's tool listing)."""
        for server in self._servers:
            connection = server.connection
            if (connection.awaits_login and server.down_reason is None
                    and connection.auth is not None and connection.auth.login_changed()):
                await self._ensure_running(server)

    async def _render(self, result: CallToolResult, language: Language,
                      connection: Connection | None) -> ToolOutput:
        content = result_content(result)
        reader = None
        if connection is not None and connection.serves_resources:
            reader = functools.partial(self.read_resource, connection.name)
        content, reads = await read_links(content, reader, language,
                                          seconds=self._link_seconds)
        plan = await plan_for_model(content, is_error=result.is_error, language=language,
                                    limits=ENGINE_LIMITS, reads=reads)
        return plan.tool_output()

    async def request(self, server_name: str, what: str,
                      send: Callable[[Client], Awaitable[_T]]) -> _T:
        """One request other than a tool call (`what` names it in a fault) to a server, on its
        connection's one request path: a server that died is restarted first, and a request that
        kills the connection restarts it before the next. The server's own refusal is its
        `MCPError`; no answer at all is `McpUnavailable` with a one-line reason."""
        connection = await self.connection(server_name)
        if isinstance(connection, str):
            raise McpUnavailable(connection)
        outcome = await connection.request(what, send)
        if isinstance(outcome, CallFault):
            self.note_fault(server_name, outcome)
            raise McpUnavailable(outcome.reason)
        return outcome

    async def read_resource(self, server_name: str, uri: str) -> ReadResourceResult:
        """`resources/read` on a server, fresh: never from the SDK's cache (a link to
        `latest.png` means the latest). Both a tool result's links and a gateway client's reads
        come this way."""
        return await self.request(server_name, uri, lambda client: client.read_resource(
            uri, cache_mode="bypass"))

    def _faulted(self, name: str, reason: str) -> str:
        logger.warning("mcp fault: tool=%s reason=%s", name, reason)
        return reason
