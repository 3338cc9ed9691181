"""The HTTP edge streaming, against scripted transports: what it asks for, what it hears, and how
a stream that fails is classified and retried (from the start) — before any real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import msgspec
import pytest

from fuseforks.core.canonical import ChatRequest
from fuseforks.core.errors import WireGarbage, WireRejected, WireUnavailable
from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import RetryNotice, RetryStop
from fuseforks.wires import WIRES, Endpoint, get_wire
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import form, snapshot_request

STREAMS = Path(__file__).parent / "fixtures" / "streams"
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.002)
KEY = "sk-stream-sentinel-7731"
SSE = {"content-type": "text/event-stream; charset=utf-8"}
FIXTURE = {"anthropic": "anthropic-text-and-tool-use", "openai-compat": "chat-text",
           "gemini": "gemini-text", "openai-responses": "responses-text"}
# Bedrock's stream is binary event-stream framing, read in tests/wires/test_bedrock.py.
SSE_WIRES = [w for w in WIRES if form(w) in FIXTURE]


def fixture(wire: str) -> tuple[bytes, bytes]:
    name = FIXTURE[form(wire)]
    return (STREAMS / f"{name}.sse").read_bytes(), (STREAMS / f"{name}.json").read_bytes()


class Cut(httpx.AsyncByteStream):
    """A body that stops with a broken connection after `data` (a proxy or the provider gone)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data
        raise httpx.RemoteProtocolError("peer closed connection without sending complete "
                                        "message body (incomplete chunked read)")


class Server:
    """Answers each request with the next of `answers`, keeping what was asked."""

    def __init__(self, *answers: Callable[[httpx.Request], httpx.Response]) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers.pop(0)(request)

    def bodies(self) -> list[dict]:
        return [msgspec.json.decode(r.content) for r in self.requests]


def sse(body: bytes) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(200, headers=SSE, content=body)


def cut(body: bytes) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(200, headers=SSE, stream=Cut(body))


def status(code: int, body: bytes, **headers: str) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _: httpx.Response(code, headers={"content-type": "application/json", **headers},
                                    content=body)


class Heard:
    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.retries: list[RetryNotice] = []
        self.stops: list[RetryStop] = []

    def client(self, wire: str, server: Server) -> ProviderClient:
        return ProviderClient(wire, Endpoint("https://provider.test/v1", KEY), policy=FAST,
                              transport=httpx.MockTransport(server),
                              on_retry=self.retries.append, on_retry_stop=self.stops.append)


def request() -> tuple[ChatRequest, ImageVault]:
    vault = ImageVault()
    return snapshot_request(vault), vault


# Where a wire that streams at another URL sends each (whole, streamed), below the base URL.
STREAM_URLS = {
    "gemini": ("/models/sim-vision-1:generateContent",
               "/models/sim-vision-1:streamGenerateContent?alt=sse"),
    "vertex-gemini": ("/publishers/google/models/sim-vision-1:generateContent",
                      "/publishers/google/models/sim-vision-1:streamGenerateContent?alt=sse"),
    "vertex-anthropic": ("/publishers/anthropic/models/sim-vision-1:rawPredict",
                         "/publishers/anthropic/models/sim-vision-1:streamRawPredict"),
    "bedrock-converse": ("/model/sim-vision-1/converse", "/model/sim-vision-1/converse-stream"),
}
ACCEPT = {"bedrock-converse": "application/vnd.amazon.eventstream"}


@pytest.mark.parametrize("wire", WIRES)
def test_each_wire_asks_for_a_stream_with_the_same_request(wire: str) -> None:
    vault = ImageVault()
    req = snapshot_request(vault)
    endpoint = Endpoint("https://provider.test/v1", KEY)
    whole = get_wire(wire).encode(req, vault, endpoint)
    streaming = get_wire(wire).streaming
    assert streaming is not None
    streamed = streaming.encode(req, vault, endpoint)
    body, streamed_body = msgspec.json.decode(whole.body), msgspec.json.decode(streamed.body)
    assert streamed.headers == whole.headers | {"accept": ACCEPT.get(wire, "text/event-stream")}
    if wire in STREAM_URLS:
        assert (whole.url, streamed.url) == tuple(
            "https://provider.test/v1" + path for path in STREAM_URLS[wire])
    else:
        assert streamed.url == whole.url
    if form(wire) in ("gemini", "bedrock-converse"):  # the method says it; the body is the same
        assert streamed_body == body
        return
    extra = {"stream": True}
    if form(wire) == "openai-compat":
        extra["stream_options"] = {"include_usage": True}
    assert streamed_body == body | extra
    assert list(streamed_body)[-len(extra):] == list(extra)  # the rest keeps its order


@pytest.mark.parametrize("wire", SSE_WIRES)
async def test_a_streamed_call_hears_deltas_and_returns_the_whole_answers_response(
        wire: str) -> None:
    stream_body, whole = fixture(wire)
    server, heard = Server(sse(stream_body)), Heard()
    async with heard.client(wire, server) as client:
        response = await client.chat(*request(), on_text=heard.deltas.append)
    assert response == get_wire(wire).decode(whole)
    assert "".join(heard.deltas) == response.text and len(heard.deltas) >= 3
    assert heard.retries == heard.stops == []
    if form(wire) != "gemini":
        assert server.bodies()[0]["stream"] is True


async def test_a_stream_cut_by_the_network_is_retried_from_the_start() -> None:
    stream_body, whole = fixture("anthropic")
    half = stream_body[:stream_body.index(b" let")]
    server, heard = Server(cut(half), sse(stream_body)), Heard()
    async with heard.client("anthropic", server) as client:
        response = await client.chat(*request(), on_text=heard.deltas.append)
    assert response == get_wire("anthropic").decode(whole)
    assert heard.deltas == ["Okay", ",", "Okay", ",", " let",
                            "'s check the weather for San Francisco, CA:"]
    assert [(n.attempt, n.status, n.error_class, n.code) for n in heard.retries] == [
        (1, None, "stream_cut", "")]
    assert len(server.requests) == 2
    assert server.requests[0].content == server.requests[1].content


async def test_a_stream_that_ends_early_without_a_transport_error_is_cut_too() -> None:
    stream_body, whole = fixture("openai-compat")
    early = stream_body[:stream_body.index(b"data: [DONE]")]
    server, heard = Server(sse(early), sse(stream_body)), Heard()
    async with heard.client("openai-compat", server) as client:
        response = await client.chat(*request(), on_text=heard.deltas.append)
    assert response == get_wire("openai-compat").decode(whole)
    assert heard.deltas == ["Hello", "!", " How can I help?"] * 2
    assert [(n.status, n.error_class) for n in heard.retries] == [(None, "stream_cut")]


async def test_cut_after_cut_gives_up_like_any_transport_failure() -> None:
    stream_body, _ = fixture("gemini")
    server, heard = Server(*[cut(stream_body[:40])] * 3), Heard()
    async with heard.client("gemini", server) as client:
        with pytest.raises(WireUnavailable) as caught:
            await client.chat(*request(), on_text=heard.deltas.append)
    assert (caught.value.status, caught.value.error_class, caught.value.attempts) == (
        None, "stream_cut", 3)
    assert [n.error_class for n in heard.retries] == ["stream_cut"] * 2
    assert heard.stops == [RetryStop(wire="gemini", model="sim-vision-1", host="provider.test",
                                     attempts=3, status=None, error_class="stream_cut", code="",
                                     images_rejected=False)]


async def test_an_overload_mid_stream_is_retried_and_names_itself() -> None:
    stream_body, whole = fixture("anthropic")
    overloaded = stream_body[:stream_body.index(b"event: content_block_stop")] + (
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        b'"message": "Overloaded"}}\n\n')
    server, heard = Server(sse(overloaded), sse(stream_body)), Heard()
    async with heard.client("anthropic", server) as client:
        response = await client.chat(*request(), on_text=heard.deltas.append)
    assert response == get_wire("anthropic").decode(whole)
    assert [(n.status, n.error_class, n.code) for n in heard.retries] == [
        (None, "stream_error", "overloaded_error")]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_status_before_the_stream_is_classified_as_without_streaming(wire: str) -> None:
    refusal = (b'{"error": {"code": 400, "message": "Unable to process input image.", '
               b'"status": "INVALID_ARGUMENT", "type": "invalid_request_error"}}')
    outcomes = []
    for on_text in (None, list[str]().append):
        server, heard = Server(status(429, b'{"error": {"message": "slow down"}}',
                                      **{"retry-after": "0"}), status(400, refusal)), Heard()
        async with heard.client(wire, server) as client:
            with pytest.raises(WireRejected) as caught:
                await client.chat(*request(), on_text=on_text)
        error = caught.value
        outcomes.append((str(error), error.refusal, error.attempts,
                         [(n.status, n.error_class, n.delay) for n in heard.retries],
                         heard.stops))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][3] == [(429, "rate_limited", 0.0)]


async def test_a_server_that_ignores_stream_answers_whole_and_is_heard_at_once() -> None:
    _, whole = fixture("openai-compat")
    server, heard = Server(status(200, whole)), Heard()
    async with heard.client("openai-compat", server) as client:
        response = await client.chat(*request(), on_text=heard.deltas.append)
    assert response == get_wire("openai-compat").decode(whole)
    assert heard.deltas == ["Hello! How can I help?"]


async def test_a_garbled_frame_is_garbage_and_not_retried() -> None:
    server, heard = Server(sse(b'data: {"candidates": [{"content": \n\n')), Heard()
    async with heard.client("gemini", server) as client:
        with pytest.raises(WireGarbage) as caught:
            await client.chat(*request(), on_text=heard.deltas.append)
    assert (caught.value.status, caught.value.error_class) == (200, "garbage")
    assert len(server.requests) == 1 and heard.retries == []
    assert [s.error_class for s in heard.stops] == ["garbage"]


async def test_the_key_an_error_event_quotes_is_scrubbed() -> None:
    server, heard = Server(*[sse(
        b'event: response.created\ndata: {"type":"response.created","response":{}}\n\n'
        b'event: error\ndata: {"type":"error","code":"server_error","message":"bad key '
        + KEY.encode() + b'","param":null}\n\n')] * 3), Heard()
    async with heard.client("openai-responses", server) as client:
        with pytest.raises(WireUnavailable) as caught:
            await client.chat(*request(), on_text=heard.deltas.append)
    assert caught.value.message == "bad key [redacted]"
    assert KEY not in str(caught.value)
