"""One configured MCP server: start it, keep its session, call its tools, name its faults.

Transports: stdio, streamable HTTP and the older HTTP+SSE (`fuseforks.mcp.sse`), each HTTP one
carrying tool results of up to `MAX_SSE_EVENT_BYTES`. A `url` configured for streamable HTTP
whose server answers the handshake's POST with a 4xx status (404, 405: a server of the older
transport) is tried again over HTTP+SSE at the same URL, as the MCP specification's
backwards-compatibility section says; 401 and 403 are not (a key does not change with the
transport). `Connection.transport` says which one is in use. A server has `start_timeout` seconds to start
(its own `startTimeout` from the configuration, else the hub's), and a call `call_timeout` seconds.

Each connection lives in its own task (the SDK's client is a stack of task groups that must be
entered and left by one task), started inside the hub's task group; calls may come from any task.
A start either succeeds or returns a one-line reason; a call either returns the server's
`CallToolResult` or a `CallFault` with a one-line reason and whether the connection is now dead.
Other requests (resources, prompts) are passed through the same way (`request`), except that a
server's own JSON-RPC error is raised as it is, for the caller to pass on.

A server reached over HTTP that logs in with OAuth carries its `ServerAuth` (`fuseforks.mcp.oauth`)
on its HTTP client. A request the server refused for want of a login a person must make is not a
dead connection: its fault is the one-line reason the auth gives (with the command that fixes
it), and a start that failed so leaves the server `awaits_login` rather than given up.

A server's lists may change while it runs: the connection hears it (a `list_changed` notification
from a server on a handshake protocol version, or a `subscriptions/listen` stream on 2026-07-28),
lists its tools again and tells `on_change` which list changed.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from typing import Any, Literal, TypeVar

import anyio
import anyio.lowlevel
import httpx2
import msgspec
from anyio.abc import TaskGroup, TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
from mcp.types import (
    CallToolResult,
    Implementation,
    ServerCapabilities,
    Tool,
)
from mcp_types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ToolListChangedNotification,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from fuseforks.core.leash import leashed
from fuseforks.events.secrets import Secrets
from fuseforks.mcp import faults
from fuseforks.mcp.config import HttpServer, ServerConfig, StdioServer, secret_entries
from fuseforks.mcp.oauth import ServerAuth
from fuseforks.mcp.sse import sse_client

logger = logging.getLogger("fuseforks.mcp")

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_START_TIMEOUT = 30.0
"""Seconds a server has to start (spawn, handshake, tool list) unless its configuration says."""
NOT_JSON_RPC_GRACE = 3.0
"""Seconds a stdio server has to complete its handshake once it wrote a line that is not
JSON-RPC. A server that prints a banner first (a `console.log` at start, dotenv's "injected env"
line) answers the handshake at once after it; a program that is no MCP server never does, and
its start is given up on then rather than at the end of the whole start timeout."""
# The SDK's streamable HTTP client buffers at most 1 MiB per SSE event by default, and a tool
# result travels as one event: base64 makes a 750 KB image ~1 MiB. 64 MiB carries four 10 MB PNGs
# (base64 ~13.4 MB each) and still bounds what a runaway server can make us hold.
MAX_SSE_EVENT_BYTES = 64 * 1024 * 1024
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
_CLIENT_INFO = Implementation(name="fuseforks", version="0.1.0")
_LIST_PAGES = 100

ListKind = Literal["tools", "resources", "prompts"]
OnChange = Callable[[str, ListKind], Awaitable[None]]
"""`on_change(server, kind)`: a server's list of that kind changed (its tools are listed again
first)."""
_T = TypeVar("_T")
_CHANGES: dict[type, ListKind] = {
    ToolListChangedNotification: "tools", ToolsListChanged: "tools",
    ResourceListChangedNotification: "resources", ResourcesListChanged: "resources",
    PromptListChangedNotification: "prompts", PromptsListChanged: "prompts",
}


def _resolve(config: StdioServer) -> str:
    """The server's executable, or `FileNotFoundError` now: through the launcher a missing
    command would only show as an early exit."""
    path = (config.env.get("PATH") if config.env else None) or os.environ.get("PATH")
    command = config.command
    if "/" in command and config.cwd is not None:
        command = os.path.join(config.cwd, command)
    found = shutil.which(command, path=path)
    if found is None:
        raise FileNotFoundError(2, "command not found", config.command)
    return found


Transport = Literal["stdio", "http", "sse"]


def _falls_back(status: int) -> bool:
    """A 4xx to the streamable-HTTP handshake means "try HTTP+SSE", except for a missing or
    refused key (the older transport would ask for the same one)."""
    return 400 <= status < 500 and status not in (401, 403)


class CallFault(msgspec.Struct, frozen=True):
    """A call that produced no `CallToolResult`; `dead` means the next call must restart;
    `timed_out`: the server did not answer in time (it may or may not still be working)."""

    reason: str
    dead: bool
    timed_out: bool = False


def _leaf(error: BaseException) -> BaseException:
    """The one real error inside nested single-member exception groups."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


class Connection:
    """A server's live session (or its absence), restartable."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_event_bytes: int = MAX_SSE_EVENT_BYTES,
        on_change: OnChange | None = None,
        auth: ServerAuth | None = None,
    ) -> None:
        """`auth`: the server's OAuth (`fuseforks.mcp.oauth`), for a server reached over HTTP
        that logs in with it."""
        self.config = config
        self._on_change = on_change
        self.auth = auth
        self.awaits_login = False
        """The last start failed for want of a login a person can make: the next call tries
        again (a login kept since is taken up), rather than giving the server up."""
        self.tools: list[Tool] = []
        self.start_timeout = (
            config.start_timeout if config.start_timeout is not None else start_timeout
        )
        self._call_timeout = call_timeout
        self._max_event_bytes = max_event_bytes
        self._client: Client | None = None
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._stderr_path: str | None = None
        self._exit_path: str | None = None
        """Where the launcher writes how the server's process ended (stdio)."""
        self._garbage_lines = 0
        self._first_garbage: str | None = None
        """The first line the server wrote to stdout that is not JSON-RPC, secrets taken out."""
        self._garbage_grace: float = 0.0
        self._starting: anyio.CancelScope | None = None
        """The start's scope while the handshake runs: a line that is not JSON-RPC shortens it."""
        self._secrets = Secrets(secret_entries(config))
        self.transport: Transport | None = None
        """The transport of the running session: `stdio`, `http` or `sse`."""
        self._refused_status: int | None = None  # a 4xx to a POST of the handshake
        self._changes: MemoryObjectSendStream[ListKind] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def connected(self) -> bool:
        return self._client is not None

    @property
    def capabilities(self) -> ServerCapabilities | None:
        """What the running server offers (None while it is not connected)."""
        return self._client.server_capabilities if self._client is not None else None

    async def start(self, task_group: TaskGroup) -> str | None:
        """Start the server (stopping any previous session); None on success, else the reason."""
        await self.stop()
        self.awaits_login = False
        first: Transport = (self.config.transport if isinstance(self.config, HttpServer)
                            else "stdio")
        reason: str | None = await task_group.start(self._run, first)
        status = self._refused_status
        if reason is not None and first == "http" and status is not None and _falls_back(status):
            logger.info("mcp server %s: streamable HTTP answered %d; trying HTTP+SSE",
                        self.name, status)
            fallback: str | None = await task_group.start(self._run, "sse")
            if fallback is None:
                return None
            reason = f"{reason}; over HTTP+SSE too: {fallback}"
        return reason

    async def stop(self) -> None:
        """Close the session and, for stdio, end the process (the SDK's bounded shutdown)."""
        if self._stop is not None and self._done is not None:
            self._stop.set()
            await self._done.wait()
        self._stop = self._done = None

    async def call(self, tool: str, arguments: dict[str, Any],
                   on_progress: ProgressFnT | None = None) -> CallToolResult | CallFault:
        """Call `tool`. Cancelling the caller abandons the request, and the SDK tells the server
        (`notifications/cancelled`); `on_progress` hears the server's progress notifications."""
        try:
            return await self.request(tool, lambda client: client.call_tool(
                tool, arguments, read_timeout_seconds=self._call_timeout,
                progress_callback=on_progress))
        except MCPError as error:
            problem = self._auth_problem()
            if problem is not None:
                return CallFault(problem, dead=False)
            return CallFault(faults.rejected(self.name, tool, error.code, error.message), False)

    async def request(self, what: str, send: Callable[[Client], Awaitable[_T]]) -> _T | CallFault:
        """`send(client)` on the running session: its result, or a `CallFault` when the server
        produced none (gone, timed out, garbled). A JSON-RPC error the server answered with is
        raised as the `MCPError` it is. `what` names the request in a fault (a tool, a URI)."""
        client = self._client
        if client is None:
            return CallFault(faults.closed_during_call(self.name, self._stderr(), ending=self._ending()), dead=True)
        try:
            return await send(client)
        except MCPError as error:
            problem = self._auth_problem()
            if problem is not None:  # a refusal only a login fixes: the connection is fine
                return CallFault(problem, dead=False)
            if error.code == REQUEST_TIMEOUT:
                reason = faults.call_timeout(self.name, what, self._call_timeout)
                return CallFault(reason, dead=False, timed_out=True)
            if error.code == CONNECTION_CLOSED:
                detail = None if error.message == "Connection closed" else error.message
                reason = faults.closed_during_call(self.name, self._stderr(), detail, self._ending())
                return CallFault(reason, dead=True)
            raise
        except ValidationError:
            return CallFault(faults.malformed_result(self.name, what), dead=False)
        except Exception as error:  # boundary: any transport failure becomes a fault
            leaf = _leaf(error)
            logger.debug("mcp call failed: server=%s what=%s", self.name, what, exc_info=leaf)
            problem = self._auth_problem()
            if problem is not None:
                return CallFault(problem, dead=False)
            return CallFault(faults.call_failed(self.name, what, leaf), dead=True)

    def _auth_problem(self) -> str | None:
        """Why the server's refusal could not be authorized (a login is needed), once."""
        return self.auth.take_problem() if self.auth is not None else None

    @property
    def serves_resources(self) -> bool:
        """The server declared the resources capability at its handshake."""
        client = self._client
        return client is not None and client.server_capabilities.resources is not None

    async def _run(
        self, transport: Transport, *,
        task_status: TaskStatus[str | None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        stop, done = anyio.Event(), anyio.Event()
        self._stop, self._done = stop, done
        self._garbage_lines = 0
        self._first_garbage = None
        self._changes = None
        started = False
        reason: str | None = None
        try:
            deadline = anyio.current_time() + self.start_timeout
            with anyio.CancelScope(deadline=deadline) as scope:
                self._starting = scope
                async with AsyncExitStack() as stack:
                    client = await self._open(stack, transport)
                    self.tools = await self._list_tools(client)
                    self._starting = None
                    scope.deadline = math.inf
                    self._client = client
                    self.transport = transport
                    started = True
                    task_status.started(None)
                    changes, heard = anyio.create_memory_object_stream[ListKind](16)
                    self._changes = changes
                    async with anyio.create_task_group() as watching, changes, heard:
                        watching.start_soon(self._apply_changes, heard)
                        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                            watching.start_soon(self._listen, client)
                        await stop.wait()
                        watching.cancel_scope.cancel()
            if not started and scope.cancelled_caught:
                if self._first_garbage is not None:
                    reason = faults.not_speaking_json_rpc(self.name, self._first_garbage,
                                                          self._garbage_grace)
                else:
                    reason = faults.handshake_timeout(self.name, self.start_timeout)
        except Exception as error:
            leaf = _leaf(error)
            if started:
                logger.warning("mcp server %s ended: %r", self.name, leaf)
            else:
                reason = self._start_fault(leaf)
        finally:
            self._starting = None
            self._client = None
            self.transport = None
            self._changes = None
            self._remove_stderr()
            done.set()
        if not started:
            task_status.started(reason or faults.exited_at_start(self.name, None))

    async def _open(self, stack: AsyncExitStack, kind: Transport) -> Client:
        config = self.config
        self._refused_status = None
        if isinstance(config, StdioServer):
            fd, self._stderr_path = tempfile.mkstemp(prefix="fuseforks-mcp-", suffix=".stderr")
            self._exit_path = f"{self._stderr_path}.exit"
            errlog = stack.enter_context(os.fdopen(fd, "w", encoding="utf-8"))
            command, *args = leashed([_resolve(config), *config.args], exit_file=self._exit_path)
            parameters = StdioServerParameters(
                command=command, args=args, env=config.env, cwd=config.cwd
            )
            transport: Any = stdio_client(parameters, errlog=errlog)
        else:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=config.headers, timeout=_HTTP_TIMEOUT,
                                   auth=self.auth,
                                   event_hooks={"response": [self._note_refusal]})
            )
            if kind == "sse":
                transport = sse_client(config.url, http, max_event_bytes=self._max_event_bytes)
            else:
                transport = streamable_http_client(
                    config.url, http_client=http, max_sse_event_size=self._max_event_bytes
                )
        client = Client(
            transport,
            client_info=_CLIENT_INFO,
            message_handler=self._on_message,
        )
        return await stack.enter_async_context(client)

    async def _note_refusal(self, response: httpx2.Response) -> None:
        """Remember a 4xx to a POST made before the session exists (the handshake's)."""
        if (self._client is None and response.request.method == "POST"
                and 400 <= response.status_code < 500):
            self._refused_status = response.status_code

    async def _list_tools(self, client: Client, *, fresh: bool = False) -> list[Tool]:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="bypass" if fresh else "use")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _on_message(self, message: object) -> None:
        if isinstance(message, Exception):
            self._garbage_lines += 1
            if self._garbage_lines == 1:
                logger.warning("mcp server %s wrote a line that is not JSON-RPC", self.name)
                self._not_json_rpc(message)
        kind = _CHANGES.get(type(message))
        if kind is not None:
            self._heard(kind)
        await anyio.lowlevel.checkpoint()

    def _not_json_rpc(self, error: Exception) -> None:
        """The server's first line that is not JSON-RPC: kept for the reason, and, while the
        handshake runs, the start given `NOT_JSON_RPC_GRACE` more seconds at most."""
        line = ""
        if isinstance(error, ValidationError):  # the SDK's parse of the line: the line is its input
            given = error.errors()[0].get("input") if error.error_count() else None
            line = given if isinstance(given, str) else ""
        self._first_garbage = self._secrets.text(line)
        scope = self._starting
        if scope is not None:
            left = scope.deadline - anyio.current_time()
            self._garbage_grace = round(max(0.0, min(NOT_JSON_RPC_GRACE, left)), 1)
            scope.deadline = min(scope.deadline, anyio.current_time() + NOT_JSON_RPC_GRACE)

    def _heard(self, kind: ListKind) -> None:
        """A change, handled in its own task (this runs in the session's read loop, which must
        not wait on a request of its own). Changes say "look again": a full queue loses none."""
        if self._changes is not None:
            with suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._changes.send_nowait(kind)

    async def _apply_changes(self, heard: MemoryObjectReceiveStream[ListKind]) -> None:
        async for kind in heard:
            await self._changed(kind)

    async def _listen(self, client: Client) -> None:
        """The 2026-07-28 way to hear of changes: a `subscriptions/listen` stream. A server that
        does not serve it simply never reports a change."""
        try:
            async with client.listen(tools_list_changed=True, resources_list_changed=True,
                                     prompts_list_changed=True) as subscription:
                async for event in subscription:
                    kind = _CHANGES.get(type(event))
                    if kind is not None:
                        self._heard(kind)
        except Exception as error:  # a server without listen, or a stream that broke
            logger.debug("mcp server %s: no change stream (%r)", self.name, _leaf(error))

    async def _changed(self, kind: ListKind) -> None:
        client = self._client
        if kind == "tools" and client is not None:
            try:
                self.tools = await self._list_tools(client, fresh=True)
            except Exception as error:  # the old list stays until the next change or restart
                logger.warning("mcp server %s: listing tools again failed: %r", self.name,
                               _leaf(error))
        if self._on_change is not None:
            try:
                await self._on_change(self.name, kind)
            except Exception:  # a listener must never cost the server its connection
                logger.warning("mcp on_change failed: server=%s", self.name, exc_info=True)

    def _start_fault(self, error: BaseException) -> str:
        problem = self._auth_problem()
        if problem is not None:
            self.awaits_login = True
            return problem
        config = self.config
        if isinstance(config, StdioServer):
            if isinstance(error, FileNotFoundError):
                return faults.command_not_found(self.name, config.command)
            if isinstance(error, OSError):
                return faults.cannot_execute(self.name, config.command, error)
            if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
                return faults.exited_at_start(self.name, self._stderr(), self._ending(),
                                              self._first_garbage)
            return faults.handshake_failed(self.name, error)
        assert isinstance(config, HttpServer)
        if isinstance(error, MCPError) and error.code != CONNECTION_CLOSED:
            return faults.handshake_failed(self.name, error)
        return faults.unreachable(self.name, config.url, error)

    def _stderr(self) -> str | None:
        """The tail of the server's stderr, its secrets taken out."""
        if self._stderr_path is None:
            return None
        try:
            with open(self._stderr_path, encoding="utf-8", errors="replace") as stream:
                tail = faults.stderr_tail(stream)
        except OSError:
            return None
        return None if tail is None else self._secrets.text(tail)

    def _ending(self) -> str | None:
        """How the server's process ended (`exit status 3`), once the launcher has said it."""
        if self._exit_path is None:
            return None
        try:
            with open(self._exit_path, encoding="utf-8") as said:
                return said.read().strip() or None
        except OSError:
            return None

    def _remove_stderr(self) -> None:
        for path in (self._stderr_path, self._exit_path):
            if path is not None:
                with suppress(OSError):
                    os.unlink(path)
        self._stderr_path = self._exit_path = None
