"""The older HTTP+SSE transport of MCP (protocol 2024-11-05), with the limits of streamable HTTP.

A GET to the server's URL opens an event stream. Its first `endpoint` event names the URL that
takes the client's messages (one POST each); every server message arrives as a `message` event on
the stream. The SDK's `sse_client` speaks this too, but it holds each event to 1 MiB with no way to
raise it (a tool result is one event, and a 750 KB image is 1 MiB of base64), and it drops a failed
POST with a log line, so the caller waits for its timeout. This transport takes the hub's
`max_event_bytes` (64 MiB by default, as for streamable HTTP), and a request that can no longer be
answered is answered at once with a `CONNECTION_CLOSED` error saying why:

- its POST failed: `the message endpoint answered HTTP 500`, or could not be sent at all;
- an event broke the stream: `SSE stream failed: Server-sent event exceeded the ... byte limit.`
  (the same words as streamable HTTP);
- the stream ended (the server went away): the read side closes, and the SDK answers every
  waiting request with "Connection closed", as it does for streamable HTTP.

The hub turns each into "closed the connection during the call" and restarts the server on the
next call.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

logger = logging.getLogger("fuseforks.mcp")

_STREAM_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


class SseEndpointError(ConnectionError):
    """The event stream did not name a usable message endpoint."""


def _detail(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


@asynccontextmanager
async def sse_client(
    url: str, http: httpx2.AsyncClient, *, max_event_bytes: int
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Streams to and from the server at `url` (its SSE endpoint), over the caller's HTTP client."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    waiting: set[RequestId] = set()  # requests sent and not yet answered

    async def answer_with_error(request_id: RequestId, reason: str) -> None:
        waiting.discard(request_id)
        error = JSONRPCError(
            jsonrpc="2.0", id=request_id, error=ErrorData(code=CONNECTION_CLOSED, message=reason)
        )
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await read_writer.send(SessionMessage(error))

    async def read(
        events: httpx2.EventSource, *, task_status: TaskStatus[str] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        started = False
        try:
            async for event in events:
                if event.event == "endpoint" and not started:
                    endpoint = urljoin(url, event.data)
                    if urlsplit(endpoint)[:2] != urlsplit(url)[:2]:
                        raise SseEndpointError(f"message endpoint on another origin: {endpoint}")
                    started = True
                    task_status.started(endpoint)
                elif event.event == "message" and event.data:
                    try:
                        message = jsonrpc_message_adapter.validate_json(event.data, by_name=False)
                    except ValidationError as error:
                        await read_writer.send(error)  # the session reports it, as for stdio
                        continue
                    if isinstance(message, JSONRPCResponse | JSONRPCError):
                        waiting.discard(message.id)
                    await read_writer.send(SessionMessage(message))
        except httpx2.SSEError as error:
            if not started:
                raise
            for request_id in list(waiting):
                await answer_with_error(request_id, f"SSE stream failed: {error}")
        except httpx2.HTTPError as error:
            if not started:
                raise
            logger.debug("mcp sse stream ended: %s", _detail(error))
        finally:
            await read_writer.aclose()
        if not started:
            raise SseEndpointError("the event stream ended before naming its message endpoint")

    async def post(endpoint: str, session_message: SessionMessage) -> None:
        message = session_message.message
        body = message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        try:
            response = await http.post(endpoint, json=body)
            failure = (
                None
                if response.is_success
                else f"the message endpoint answered HTTP {response.status_code}"
            )
        except httpx2.HTTPError as error:
            failure = f"the message endpoint could not be reached: {_detail(error)}"
        if failure is None:
            return
        logger.debug("mcp sse post failed: %s", failure)
        if isinstance(message, JSONRPCRequest):
            await answer_with_error(message.id, failure)

    async def write(endpoint: str) -> None:
        async with write_reader:
            async for session_message in write_reader:
                message = session_message.message
                if isinstance(message, JSONRPCRequest):
                    waiting.add(message.id)
                await post(endpoint, session_message)

    async with (
        read_writer,
        read_stream,
        write_stream,
        write_reader,
        http.stream("GET", url, headers=_STREAM_HEADERS) as response,
    ):
        response.raise_for_status()
        events = httpx2.EventSource(response, max_event_size=max_event_bytes)
        async with anyio.create_task_group() as group:
            endpoint: str = await group.start(read, events)
            group.start_soon(write, endpoint)
            try:
                yield read_stream, write_stream
            finally:
                group.cancel_scope.cancel()
