"""Reading a streamed answer: server-sent events in, text deltas out, one `ChatResponse` at the end.

Every wire that streams answers with `text/event-stream`; `httpx-sse` splits the body into events
and each wire's accumulator (`Wire.streaming`) reads them: Anthropic's typed events ending in
`message_stop`, Chat Completions chunks ending in `data: [DONE]`, the Responses events ending in
`response.completed`, Gemini's `GenerateContentResponse` frames ending with a `finishReason`.
An accumulator returns the text each event adds and, at the end, the response the wire's
non-streaming decoder makes of the same content — so a streamed call and a whole one are
recorded alike.

How a stream fails, as the HTTP edge raises it:

- the body ends before the wire's last event → `WireRetryable`, error class `stream_cut`;
- an error event in the stream (Anthropic `event: error`, an `{"error": …}` chunk or frame, a
  Responses `error` or `response.failed`) → classified by the wire's own `classify`, as if the
  error had come as a status with that body; what would be retried (an overload, a 5xx-like
  error, a rate limit) is a `WireRetryable` with error class `stream_error` and no status;
- a frame that is not the wire's JSON → `WireGarbage`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import httpx
import msgspec
from httpx_sse import EventSource

from fuseforks.core.canonical import ChatResponse
from fuseforks.core.errors import WireError, WireGarbage, WireRetryable
from fuseforks.core.names import WireName
from fuseforks.wires import eventstream as eventstream_format
from fuseforks.wires.base import JSON, Accumulator, Classify, Framing

T = TypeVar("T")

EVENT_STREAM = "text/event-stream"
STREAM_CUT = "stream_cut"
STREAM_ERROR = "stream_error"


def is_event_stream(response: httpx.Response) -> bool:
    """The response is a stream of server-sent events (a server that ignores `stream: true`
    answers with the whole JSON body instead)."""
    return response.headers.get("content-type", "").partition(";")[0].strip() == EVENT_STREAM


async def read_events(response: httpx.Response, accumulator: Accumulator,
                      on_text: Callable[[str], None]) -> ChatResponse:
    """Feed every event of `response` to `accumulator`, each text delta to `on_text` as it
    arrives; the accumulated response at the end. Transport errors are the caller's."""
    async for event in EventSource(response).aiter_sse():
        text = accumulator.feed(event.event, event.data)
        if text:
            on_text(text)
    return accumulator.finish()


def is_framed_as(response: httpx.Response, framing: Framing) -> bool:
    """The response is a stream in the wire's framing (a server that ignores a request for a
    stream answers with the whole JSON body instead)."""
    if framing == "sse":
        return is_event_stream(response)
    content_type = response.headers.get("content-type", "").partition(";")[0].strip()
    return content_type == eventstream_format.CONTENT_TYPE


async def read_eventstream(response: httpx.Response, accumulator: Accumulator,
                           on_text: Callable[[str], None]) -> ChatResponse:
    """Feed every event-stream message of `response` to `accumulator` as an event named by its
    `:event-type` (an exception message as `exception:<its :exception-type>`), each text delta
    to `on_text`; the accumulated response at the end. A frame that is not event-stream framing
    is `WireGarbage`; a body that stops inside a message is read as a stream cut short."""
    decoder = eventstream_format.Decoder()
    try:
        async for chunk in response.aiter_bytes():
            for message in decoder.feed(chunk):
                kind = message.text(":message-type")
                if kind == "event":
                    name = message.text(":event-type")
                else:
                    name = "exception:" + (message.text(":exception-type")
                                           or message.text(":error-code") or "unknown")
                text = accumulator.feed(name, message.payload.decode("utf-8", "replace"))
                if text:
                    on_text(text)
    except eventstream_format.FramingError as exc:
        raise WireGarbage(wire="bedrock-converse", status=None, error_class="garbage",
                          message=f"the stream is not event-stream framing ({exc})") from None
    return accumulator.finish()


def decode_event(wire: WireName, data: str, shape: type[T]) -> T:
    """One event's `data:` as `shape`; anything else is `WireGarbage`."""
    try:
        return msgspec.json.decode(data, type=shape)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireGarbage(
            wire=wire, status=None, error_class="garbage",
            message=f"a stream event is not a {wire} event ({exc}); {len(data)} characters",
        ) from None


def stream_cut(wire: WireName, waiting_for: str) -> WireRetryable:
    return WireRetryable(wire=wire, status=None, error_class=STREAM_CUT,
                         message=f"the stream ended before {waiting_for}")


def stream_error(wire: WireName, classify: Classify, status: int, error: object) -> WireError:
    """An error event, classified by the wire as a response with `status` and `error` as its
    body would be: retryable ones become `stream_error`; a refusal stays a refusal."""
    classified = classify(status, JSON.encode(error))
    if isinstance(classified, WireRetryable):
        return WireRetryable(wire=wire, status=None, error_class=STREAM_ERROR,
                             error_type=classified.error_type, code=classified.code,
                             message=classified.message)
    return classified


# Words of an error code or type that name the request, not the server's trouble.
_REQUEST_WORDS = ("invalid", "image", "policy", "unsupported", "context_length", "too_large",
                  "too_small", "not_found", "mismatch", "empty")


def error_status(*names: str | None) -> int:
    """The status an OpenAI-shaped error code or type stands for when it comes inside a stream
    (which has already answered 200): a rate limit 429; a code that names the request (an
    invalid prompt, an image the model cannot read, a policy) 400, which the provider would
    refuse again; anything else — server trouble, or nothing said — 500, worth a retry."""
    words = " ".join(n.lower() for n in names if n)
    if "rate_limit" in words:
        return 429
    if any(word in words for word in _REQUEST_WORDS):
        return 400
    return 500
