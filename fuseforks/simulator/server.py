"""The simulator's HTTP server: HTTP/1.1 over asyncio + h11 on 127.0.0.1, all seven wires.

Plain asyncio (not a framework) so a fault can do what real networks do — drop the connection
without an answer — and so the server starts and stops cleanly inside a test's event loop. Routes
(`base_urls` gives the base URL each wire's client should use):

    POST /anthropic/v1/messages                           anthropic
    POST /openai-compat/v1/chat/completions               openai-compat
    POST /gemini/v1beta/models/{model}:generateContent    gemini
    POST /{openai,xai,meta,perplexity}/v1/responses       the four Responses wires
    POST /_sim/faults                                     queue faults (JSON list of Fault)
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

import h11
import msgspec

from fuseforks.simulator import anthropic, gemini, openai_chat, responses
from fuseforks.simulator.brain import DEFAULT_SCRIPT, Script
from fuseforks.simulator.shapes import Invalid, Reply, error_body, error_reply

WIRE_PREFIXES: dict[str, str] = {
    "anthropic": "/anthropic",
    "openai-compat": "/openai-compat/v1",
    "gemini": "/gemini/v1beta",
    "openai-responses": "/openai/v1",
    "xai-responses": "/xai/v1",
    "meta-responses": "/meta/v1",
    "perplexity-responses": "/perplexity/v1",
}
_GEMINI_PATH = re.compile(r"/gemini/v1beta/models/(?P<model>[^/:]+):generateContent")
_RESPONSES_PATHS = {f"{WIRE_PREFIXES[w]}/responses": w for w in
                    ("openai-responses", "xai-responses", "meta-responses", "perplexity-responses")}


class Fault(msgspec.Struct, frozen=True, kw_only=True):
    """One injected misbehaviour, consumed by the next request (of `wire`, when set)."""

    kind: Literal["status", "garbage", "drop", "stall"]
    status: int = 500
    seconds: float = 0.0  # stall: how long to keep the client waiting before dropping
    retry_after: float | None = None
    wire: str | None = None
    echo_key: bool = False  # the error message quotes the key received, as some providers do

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None, wire: str | None = None,
              echo_key: bool = False) -> Fault:
        return cls(kind="status", status=status, retry_after=retry_after, wire=wire,
                   echo_key=echo_key)

    @classmethod
    def garbage(cls, *, wire: str | None = None) -> Fault:
        return cls(kind="garbage", wire=wire)

    @classmethod
    def drop(cls, *, wire: str | None = None) -> Fault:
        return cls(kind="drop", wire=wire)

    @classmethod
    def stall(cls, seconds: float, *, wire: str | None = None) -> Fault:
        return cls(kind="stall", seconds=seconds, wire=wire)


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the simulator saw it (the body is kept for tests; auth headers are not)."""

    seq: int
    wire: str
    path: str
    body: bytes
    status: int | None  # None: the connection was dropped


_DROP = object()


@dataclass(frozen=True, slots=True)
class _Stall:
    seconds: float
GARBAGE_BODY = b'{"id": "garbage", "choices": [ {"message": '  # truncated JSON


def _presented_key(wire: str, headers: dict[str, str]) -> str:
    if wire == "anthropic":
        return headers.get("x-api-key", "")
    if wire == "gemini":
        return headers.get("x-goog-api-key", "")
    return headers.get("authorization", "").removeprefix("Bearer ")


def _auth_ok(wire: str, headers: dict[str, str], query: str) -> bool:
    if wire == "anthropic":
        return bool(headers.get("x-api-key")) and bool(headers.get("anthropic-version"))
    if wire == "gemini":
        return bool(headers.get("x-goog-api-key")) or "key=" in query
    return headers.get("authorization", "").startswith("Bearer ") and len(
        headers["authorization"]) > len("Bearer ")


class Simulator:
    """A strict, scripted, sighted stand-in for the seven providers."""

    def __init__(self, *, script: Script = DEFAULT_SCRIPT, record_dir: Path | str | None = None) -> None:
        self.script = script
        self.record_dir = Path(record_dir) if record_dir else None
        self.received: list[Received] = []
        self._faults: deque[Fault] = deque()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._seq = 0
        self.port = 0
        self.connections = 0  # TCP connections accepted (connection reuse is observable)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_urls(self) -> dict[str, str]:
        return {wire: self.base_url + prefix for wire, prefix in WIRE_PREFIXES.items()}

    def inject(self, *faults: Fault) -> None:
        self._faults.extend(faults)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        if self.record_dir:
            self.record_dir.mkdir(parents=True, exist_ok=True)
        self._server = await asyncio.start_server(self._connection, host, port, limit=1 << 20)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._server.wait_closed()
            self._server = None

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = await self._read_request(conn, reader)
                if request is None:
                    return
                reply = self._respond(request, body)
                if isinstance(reply, _Stall):
                    await asyncio.sleep(reply.seconds)
                    reply = _DROP
                if reply is _DROP:
                    writer.transport.abort()
                    return
                assert isinstance(reply, Reply)
                headers = [("content-type", "application/json"),
                           ("content-length", str(len(reply.body))), *reply.headers]
                writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers)))
                writer.write(conn.send(h11.Data(data=reply.body)))
                writer.write(conn.send(h11.EndOfMessage()))
                await writer.drain()
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.RemoteProtocolError, asyncio.CancelledError):
            return  # the connection's own task: ending it is the whole of the cleanup
        finally:
            if task is not None:
                self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()

    @staticmethod
    async def _read_request(
        conn: h11.Connection, reader: asyncio.StreamReader
    ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(await reader.read(1 << 20))
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None, b""

    def _route(self, target: str) -> tuple[str | None, str]:
        path = urlsplit(target).path
        if path == "/anthropic/v1/messages":
            return "anthropic", ""
        if path == "/openai-compat/v1/chat/completions":
            return "openai-compat", ""
        if match := _GEMINI_PATH.fullmatch(path):
            return "gemini", unquote(match["model"])
        return _RESPONSES_PATHS.get(path), ""

    def _next_fault(self, wire: str) -> Fault | None:
        for fault in self._faults:
            if fault.wire in (None, wire):
                self._faults.remove(fault)
                return fault
        return None

    def _respond(self, request: h11.Request, body: bytes) -> Reply | object:
        target = request.target.decode("ascii", "replace")
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
        if request.method == b"POST" and urlsplit(target).path == "/_sim/faults":
            self.inject(*msgspec.json.decode(body, type=list[Fault]))
            return Reply(200, b'{"queued": true}')
        wire, model = self._route(target)
        if wire is None or request.method != b"POST":
            return Reply(404, b'{"error": {"message": "no such endpoint", "code": 404}}')
        self._seq += 1
        seq = self._seq
        if self.record_dir:
            (self.record_dir / f"{seq:04d}-{wire}.json").write_bytes(body)
        reply = self._answer(wire, model, seq, headers, urlsplit(target).query, body)
        status = reply.status if isinstance(reply, Reply) else None
        self.received.append(Received(seq=seq, wire=wire, path=urlsplit(target).path, body=body,
                                      status=status))
        return reply

    def _answer(self, wire: str, model: str, seq: int, headers: dict[str, str], query: str,
                body: bytes) -> Reply | object:
        fault = self._next_fault(wire)
        if fault is not None:
            if fault.kind == "drop":
                return _DROP
            if fault.kind == "stall":
                return _Stall(fault.seconds)
            if fault.kind == "garbage":
                return Reply(200, GARBAGE_BODY)
            extra = [("retry-after", f"{fault.retry_after:g}")] if fault.retry_after is not None else []
            message = "simulated fault"
            if fault.echo_key:
                message = f"Incorrect API key provided: {_presented_key(wire, headers)}"
            return Reply(fault.status, error_body(wire, fault.status, message), extra)
        if not _auth_ok(wire, headers, query):
            return Reply(401, error_body(wire, 401, "missing or malformed API key"))
        try:
            payload = msgspec.json.decode(body)
            if not isinstance(payload, dict):
                raise Invalid("request body must be a JSON object")
            if wire == "anthropic":
                return anthropic.handle(payload, seq, self.script)
            if wire == "openai-compat":
                return openai_chat.handle(payload, seq, self.script)
            if wire == "gemini":
                return gemini.handle(payload, seq, self.script, model)
            return responses.handle(payload, seq, self.script)
        except msgspec.DecodeError as exc:
            return error_reply(wire, Invalid(f"We could not parse the JSON body of your request ({exc})"))
        except Invalid as exc:
            return error_reply(wire, exc)
