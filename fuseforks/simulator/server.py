"""The simulator's HTTP server: HTTP/1.1 over an anyio TCP listener + h11 on 127.0.0.1, all seven
wires.

A bare listener (not a framework) so a fault can do what real networks do — drop the connection
without an answer — and so the server starts and stops cleanly inside a test's event loop: every
connection is a task of one task group, which `stop()` cancels and leaves. Routes (`base_urls`
gives the base URL each wire's client should use):

    POST /anthropic/v1/messages                           anthropic
    POST /openai-compat/v1/chat/completions               openai-compat
    POST /gemini/{v1beta,v1}/models/{model}:generateContent  gemini (both API versions)
    POST /gemini/{v1beta,v1}/models/{model}:streamGenerateContent?alt=sse
                                                          gemini, streamed: `data:` frames
    POST /gemini/{v1beta,v1}/models/{model}:streamGenerateContent
                                                          gemini, streamed: one JSON array
    POST /{openai,xai,meta,perplexity}/v1/responses       the four Responses wires
    POST /_sim/faults                                     queue faults (JSON list of Fault)
    POST /_sim/release                                    answer every request held by `hold`

`"stream": true` in the body of the anthropic, openai-compat and Responses routes answers with
that service's server-sent events (`streams.py`), sent chunked frame by frame; a request refused
before streaming starts (auth, an unknown model, 400s, profiles) is answered with a plain JSON
error, as the real services do. `Script.latency` delays the answer, so a stream's first frame.

The model (in the Gemini path, else the body's `model`) must be one the wire knows
(`models.py`): any other name gets the provider's own "model not found", unless the simulator
was started with `any_model`.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

import anyio
import h11
import msgspec
from anyio.abc import SocketAttribute, SocketStream

from fuseforks.simulator import anthropic, bedrock, clouds, gemini, openai_chat, responses
from fuseforks.simulator.brain import DEFAULT_SCRIPT, Script
from fuseforks.simulator.models import knows, not_found
from fuseforks.simulator.sending import send_cut, send_reply, send_stream
from fuseforks.simulator.shapes import (
    JSON,
    Invalid,
    Reply,
    Streamed,
    error_body,
    error_headers,
    error_reply,
)

logger = logging.getLogger("fuseforks.simulator")
_READ_BYTES = 1 << 20

WIRE_PREFIXES: dict[str, str] = {
    "anthropic": "/anthropic",
    "openai-compat": "/openai-compat/v1",
    "gemini": "/gemini/v1beta",
    "openai-responses": "/openai/v1",
    "xai-responses": "/xai/v1",
    "meta-responses": "/meta/v1",
    "perplexity-responses": "/perplexity/v1",
    "bedrock-converse": "/bedrock",
    "vertex-gemini": "/vertex/v1/projects/fuseforks-sim/locations/us-central1",
    "vertex-anthropic": "/vertex/v1/projects/fuseforks-sim/locations/us-east5",
    "azure-chat": "/azure",
    "azure-responses": "/azure",
    "ollama": "/ollama/v1",
    "vllm": "/vllm/v1",
    "llamacpp": "/llamacpp/v1",
    "lmstudio": "/lmstudio/v1",
}
LOCAL_SERVERS = ("ollama", "vllm", "llamacpp", "lmstudio")
_BEDROCK_PATH = re.compile(r"/bedrock/model/(?P<model>[^/]+)/(?P<op>converse|converse-stream)")
_VERTEX_PATH = re.compile(
    r"/vertex/(?:v1|v1beta1)/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/"
    r"(?P<publisher>google|anthropic)/models/(?P<model>[^/:]+)"
    r":(?P<method>generateContent|streamGenerateContent|rawPredict|streamRawPredict)")
_AZURE_CHAT_PATH = re.compile(r"/azure/openai/deployments/(?P<model>[^/]+)/chat/completions")
_LOCAL_PATHS = {f"/{w}/v1/chat/completions": w for w in LOCAL_SERVERS}
_GEMINI_PATH = re.compile(
    r"/gemini/(?P<version>v1(?:beta)?)/models/(?P<model>[^/:]+)"
    r":(?P<method>generateContent|streamGenerateContent)")
_RESPONSES_PATHS = {f"{WIRE_PREFIXES[w]}/responses": w for w in
                    ("openai-responses", "xai-responses", "meta-responses", "perplexity-responses")}


class Fault(msgspec.Struct, frozen=True, kw_only=True):
    """One injected misbehaviour, consumed by the next request (of `wire`, when set).

    `cut` answers as usual but stops part way: the headers and some of a stream's frames (half a
    whole body), then the connection closes without the end of the answer. `hold` keeps the
    request waiting until `release()` (`POST /_sim/release`), then answers it as usual: a request
    in flight for exactly as long as a test needs."""

    kind: Literal["status", "garbage", "drop", "stall", "cut", "hold"]
    status: int = 500
    seconds: float = 0.0  # stall: how long to keep the client waiting before dropping
    frames: int | None = None  # cut: frames sent before closing (default: half; never all)
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

    @classmethod
    def cut(cls, *, frames: int | None = None, wire: str | None = None) -> Fault:
        return cls(kind="cut", frames=frames, wire=wire)

    @classmethod
    def hold(cls, *, wire: str | None = None) -> Fault:
        return cls(kind="hold", wire=wire)


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


@dataclass(frozen=True, slots=True)
class _Held:
    answer: object


@dataclass(frozen=True, slots=True)
class _Cut:
    answer: Reply | Streamed
    frames: int | None


def _status(reply: object) -> int | None:
    """The status a reply is sent with (None: no answer at all)."""
    if isinstance(reply, _Cut | _Held):
        reply = reply.answer
    if isinstance(reply, Streamed):
        return 200
    return reply.status if isinstance(reply, Reply) else None


def _vertex_prefix(path: str) -> str:
    """`/vertex/v1/projects/P/locations/L/publishers/google` of a Vertex Gemini path."""
    return path[:path.index("/publishers/google") + len("/publishers/google")]


def _gemini_stream(path: str, query: str) -> Literal["sse", "json"] | None:
    """How a Gemini route answers: `streamGenerateContent` streams, as `data:` frames with
    `alt=sse`, else as one JSON array sent in pieces."""
    match = _GEMINI_PATH.fullmatch(path)
    if match is None or match["method"] != "streamGenerateContent":
        return None
    return "sse" if parse_qs(query).get("alt") == ["sse"] else "json"


GARBAGE_BODY = b'{"id": "garbage", "choices": [ {"message": '  # truncated JSON


def _bearer(headers: dict[str, str]) -> str:
    value = headers.get("authorization", "")
    return value.removeprefix("Bearer ") if value.startswith("Bearer ") else ""


def _presented_key(wire: str, headers: dict[str, str]) -> str:
    if wire.startswith("azure-") and headers.get("api-key"):
        return headers["api-key"]
    if wire == "anthropic":
        return headers.get("x-api-key") or _bearer(headers)
    if wire == "gemini":
        return headers.get("x-goog-api-key", "")
    return headers.get("authorization", "").removeprefix("Bearer ")


def _auth_ok(wire: str, headers: dict[str, str], query: str, required: bool = True) -> bool:
    if wire == "anthropic":  # `x-api-key`, or the Bearer token the official SDK sends
        if not headers.get("anthropic-version"):
            return False
        return bool(_presented_key(wire, headers)) or not required
    if wire == "gemini":
        return bool(headers.get("x-goog-api-key")) or "key=" in query or not required
    if wire.startswith("azure-") and headers.get("api-key"):
        return True
    if wire in LOCAL_SERVERS:
        required = False  # a local server has no key unless its operator gave it one
    if "authorization" in headers:
        return bool(_bearer(headers))
    return not required


def _unauthorized(wire: str) -> Reply:
    """Each provider's answer to a request without valid credentials."""
    if wire.startswith("vertex-"):
        return Reply(401, error_body("gemini", 401, (
            "Request had invalid authentication credentials. Expected OAuth 2 access token, "
            "login cookie or other valid authentication credential. See "
            "https://developers.google.com/identity/sign-in/web/devconsole-project.")))
    if wire.startswith("azure-"):
        return Reply(401, JSON.encode({"error": {"code": "401", "message": (
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
            "provide a valid key for an active subscription and use a correct regional API "
            "endpoint for your resource.")}}))
    return Reply(401, error_body(wire, 401, "missing or malformed API key"))


class Simulator:
    """A strict, scripted, sighted stand-in for the seven providers.

    `start()` and `stop()` enter and leave the server's task group, so they are called by the same
    task, and anything opened in between is closed before `stop()` (as `run_simulator` does).
    """

    def __init__(self, *, script: Script = DEFAULT_SCRIPT, record_dir: Path | str | None = None,
                 require_key: bool = True, any_model: bool = False) -> None:
        """`require_key`: a request without a key gets the provider's 401, as from the real
        service; without it the simulator is a server on this machine like any other, which
        takes a request with no key (a key that is sent must still be well formed).
        `any_model`: answer every model name, not only those the wire knows (`models.py`), for
        a test or a client whose names are its own."""
        self.script = script
        self.require_key = require_key
        self.any_model = any_model
        self.record_dir = Path(record_dir) if record_dir else None
        self.received: list[Received] = []
        self._faults: deque[Fault] = deque()
        self._released: anyio.Event | None = None  # made in start(): an event needs the loop
        self._running: AsyncExitStack | None = None
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

    def release(self) -> None:
        """Answer every request a `hold` fault keeps waiting."""
        released, self._released = self._released, anyio.Event()
        if released is not None:
            released.set()

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Listen on `host:port` (0: a free port, then in `self.port`) and serve until `stop()`."""
        if self.record_dir:
            self.record_dir.mkdir(parents=True, exist_ok=True)
        self._released = anyio.Event()
        running = AsyncExitStack()
        await running.enter_async_context(self._serving(host, port))
        self._running = running

    async def stop(self) -> None:
        """Close the listener and every open connection (mid-request ones too) and wait for them."""
        running, self._running = self._running, None
        if running is not None:
            await running.aclose()

    async def serve_forever(self) -> None:
        """Wait while the started server serves (until this task is cancelled)."""
        assert self._running is not None, "start the simulator first"
        await anyio.sleep_forever()

    @asynccontextmanager
    async def _serving(self, host: str, port: int) -> AsyncGenerator[None]:
        async with (
            await anyio.create_tcp_listener(local_host=host, local_port=port) as listener,
            anyio.create_task_group() as group,
        ):
            self.port = listener.extra(SocketAttribute.local_port)
            group.start_soon(listener.serve, self._connection, group)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def _connection(self, stream: SocketStream) -> None:
        """One client connection: requests in order (keep-alive), each answered or faulted."""
        self.connections += 1
        async with stream:
            try:
                await self._exchange(stream)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, h11.RemoteProtocolError):
                return  # the client went away or spoke nonsense: closing is the whole answer
            except Exception:  # a bug must cost its connection only, never the other connections
                logger.exception("simulator: connection failed")

    async def _exchange(self, stream: SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        while True:
            request, body = await self._read_request(conn, stream)
            if request is None:
                return
            reply = self._respond(request, body)
            if isinstance(reply, _Held):
                assert self._released is not None
                await self._released.wait()
                reply = reply.answer
            if self.script.latency and isinstance(reply, (Reply, Streamed, _Cut)):
                await anyio.sleep(self.script.latency)  # a model takes time to answer
            if isinstance(reply, _Stall):
                await anyio.sleep(reply.seconds)
                reply = _DROP
            if reply is _DROP:
                return  # leaving closes (aborts) the connection without an answer
            if isinstance(reply, _Cut):
                await send_cut(conn, stream, reply.answer, reply.frames)
                return  # leaving closes the connection with the answer unfinished
            if isinstance(reply, Streamed):
                await send_stream(conn, stream, reply)
            else:
                assert isinstance(reply, Reply)
                await send_reply(conn, stream, reply)
            if conn.our_state is h11.MUST_CLOSE:
                return
            conn.start_next_cycle()

    @staticmethod
    async def _read_request(
        conn: h11.Connection, stream: SocketStream
    ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    data = await stream.receive(_READ_BYTES)
                except anyio.EndOfStream:
                    data = b""  # h11 reads an empty chunk as the client closing its side
                conn.receive_data(data)
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return request, bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None, b""

    def _route(self, target: str) -> tuple[str | None, str]:
        """The wire a path belongs to, and the model when the path names it."""
        path = urlsplit(target).path
        if path == "/anthropic/v1/messages":
            return "anthropic", ""
        if path == "/openai-compat/v1/chat/completions":
            return "openai-compat", ""
        if match := _GEMINI_PATH.fullmatch(path):
            return "gemini", unquote(match["model"])
        if match := _BEDROCK_PATH.fullmatch(path):
            return "bedrock-converse", unquote(match["model"])
        if match := _VERTEX_PATH.fullmatch(path):
            google = match["publisher"] == "google"
            return ("vertex-gemini" if google else "vertex-anthropic"), unquote(match["model"])
        if match := _AZURE_CHAT_PATH.fullmatch(path):
            return "azure-chat", unquote(match["model"])
        if path == "/azure/openai/responses":
            return "azure-responses", ""
        if path in _LOCAL_PATHS:
            return _LOCAL_PATHS[path], ""
        return _RESPONSES_PATHS.get(path), ""

    def _knows(self, wire: str, model: str) -> bool:
        return self.any_model or knows(wire, model)

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
        if request.method == b"POST" and urlsplit(target).path == "/_sim/release":
            self.release()
            return Reply(200, b'{"released": true}')
        wire, model = self._route(target)
        if wire is None or request.method != b"POST":
            return Reply(404, b'{"error": {"message": "no such endpoint", "code": 404}}')
        self._seq += 1
        seq = self._seq
        if self.record_dir:
            (self.record_dir / f"{seq:04d}-{wire}.json").write_bytes(body)
        reply = self._answer(wire, model, seq, headers, target, body)
        self.received.append(Received(seq=seq, wire=wire, path=urlsplit(target).path, body=body,
                                      status=_status(reply)))
        return reply

    def _answer(self, wire: str, model: str, seq: int, headers: dict[str, str], target: str,
                body: bytes) -> Reply | Streamed | object:
        fault = self._next_fault(wire)
        if fault is not None and fault.kind == "cut":
            return _Cut(self._reply(wire, model, seq, headers, target, body), fault.frames)
        if fault is not None and fault.kind == "hold":
            return _Held(self._reply(wire, model, seq, headers, target, body))
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
            return Reply(fault.status, error_body(wire, fault.status, message),
                         extra + error_headers(wire, fault.status))
        return self._reply(wire, model, seq, headers, target, body)

    def _reply(self, wire: str, model: str, seq: int, headers: dict[str, str], target: str,
               body: bytes) -> Reply | Streamed:
        """What the provider answers: a refusal, a whole reply, or a stream."""
        path, query = urlsplit(target).path, urlsplit(target).query
        if wire == "bedrock-converse":
            refused = bedrock.check_auth(headers, self.require_key)
            if refused is not None:
                return refused
        elif not _auth_ok(wire, headers, query, self.require_key):
            return _unauthorized(wire)
        if wire.startswith("azure-"):
            version = clouds.azure_version(wire, query)
            if version is not None:
                return version
        route = _GEMINI_PATH.fullmatch(path)
        if route is not None and not self._knows(wire, model):  # Gemini names it in the path
            return not_found(wire, model, seq, version=route["version"], method=route["method"])
        if model and route is None and not self._knows(wire, model):  # so do the clouds
            return not_found(wire, model, seq, path=path)
        try:
            payload = msgspec.json.decode(body)
            if not isinstance(payload, dict):
                raise Invalid("request body must be a JSON object")
            named = payload.get("model")
            if not model and isinstance(named, str) and not self._knows(wire, named):
                return not_found(wire, named, seq)
            return self._handle(wire, model, payload, seq, path, query)
        except msgspec.DecodeError as exc:
            return error_reply(wire, Invalid(f"We could not parse the JSON body of your request ({exc})"))
        except Invalid as exc:
            return error_reply(wire, exc)

    def _handle(self, wire: str, model: str, payload: dict[str, object], seq: int, path: str,
                query: str) -> Reply | Streamed:
        if wire == "anthropic":
            return anthropic.handle(payload, seq, self.script)
        if wire in ("openai-compat", *LOCAL_SERVERS):
            return openai_chat.handle(payload, seq, self.script, server=wire)
        if wire == "gemini":
            return gemini.handle(payload, seq, self.script, model, _gemini_stream(path, query))
        if wire == "bedrock-converse":
            match = _BEDROCK_PATH.fullmatch(path)
            assert match is not None
            return bedrock.handle(payload, seq, self.script, model,
                                  stream=match["op"] == "converse-stream")
        if wire == "vertex-gemini":
            return gemini.handle(payload, seq, self.script, model, _gemini_stream(
                path.replace(_vertex_prefix(path), "/gemini/v1"), query))
        if wire == "vertex-anthropic":
            return anthropic.handle(clouds.vertex_anthropic_body(payload, model, path), seq,
                                    self.script)
        if wire == "azure-chat":
            return openai_chat.handle(payload, seq, self.script, server=wire)
        return responses.handle(payload, seq, self.script)
