"""What every wire adapter shares: the endpoint, the encoded HTTP request, the JSON codec."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import msgspec

from fuseforks.core.canonical import ChatRequest, ChatResponse, Message, ToolResultMessage
from fuseforks.core.errors import WireError, WireGarbage
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.wires.parameters import ParameterTable

# Built once (msgspec perf tips). Key order in the dicts adapters build is the order on the wire.
JSON = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a wire sends: base URL (overridable) and API key (never printed: `repr=False`)."""

    base_url: str
    api_key: str = field(default="", repr=False)

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def auth(self, header: str, prefix: str = "") -> dict[str, str]:
        """The auth header, or none without a key (the provider then answers a clear 401)."""
        return {header: prefix + self.api_key} if self.api_key else {}


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """An encoded provider call. Headers hold the key and the body may hold images: neither is
    part of `repr`."""

    url: str
    headers: dict[str, str] = field(repr=False)
    body: bytes = field(repr=False)


Encode = Callable[[ChatRequest, ImageVault, Endpoint], HttpRequest]
Decode = Callable[[bytes], ChatResponse]
Classify = Callable[[int, bytes], WireError]


class Accumulator(Protocol):
    """One streamed response being read, event by event (`fuseforks/wires/streaming.py` reads
    the server-sent events and hands each one over)."""

    def feed(self, event: str, data: str) -> str:
        """Take one event (its `event:` name, `message` when it has none, and its `data:`);
        return the answer text it adds ("" for none). Raises a `WireError` for an error event
        and `WireGarbage` for a frame that is not the wire's."""
        ...

    def finish(self) -> ChatResponse:
        """The whole response, equal to what the wire's `decode` makes of the same content;
        a `WireRetryable` (`stream_cut`) when the stream ended before its last event."""
        ...


@dataclass(frozen=True, slots=True)
class Streaming:
    """How a wire streams: the same request asking for server-sent events, and a fresh
    accumulator for each attempt."""

    encode: Encode
    accumulator: Callable[[], Accumulator]


@dataclass(frozen=True, slots=True)
class Wire:
    """One provider request format, as the client and the registry see it: what it can do is data
    here, so no code asks for a wire by name."""

    name: WireName
    encode: Encode
    decode: Decode
    classify: Classify
    default_base_url: str
    key_envs: tuple[str, ...]
    placement: Placement
    """Where the adapter puts a tool result's images when the request does not say
    (`ChatRequest.placement` None); the engine records the placement of each turn."""
    placements: tuple[Placement, ...]
    """Every placement the adapter can encode; a request asking for another is a `ValueError`."""
    parameters: ParameterTable
    """Which token parameter each model family takes and which parameters it refuses."""
    jpeg_resend: bool = False
    """A 400 to a request with WebP images is resent once with them as JPEG (some compatible
    endpoints accept only JPEG and PNG)."""
    streaming: Streaming | None = None
    """How the wire streams its answer; None: it does not (a listener then hears the whole text
    at once)."""


T = TypeVar("T")


def decode_json(wire: WireName, body: bytes, shape: type[T]) -> T:
    """Decode a 2xx body into `shape`, turning any mismatch into `WireGarbage`."""
    try:
        return msgspec.json.decode(body, type=shape)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise WireGarbage(
            wire=wire, status=None, error_class="garbage",
            message=f"response body is not a {wire} response ({exc}); {len(body)} bytes",
        ) from None


def tool_arguments(wire: WireName, raw: str) -> dict[str, Any]:
    """Tool-call arguments sent as a JSON string (OpenAI shapes) → dict."""
    if not raw.strip():
        return {}
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        value = None
    if not isinstance(value, dict):
        raise WireGarbage(
            wire=wire, status=None, error_class="garbage",
            message="tool call arguments are not a JSON object",
        )
    return value


def arguments_json(arguments: dict[str, Any]) -> str:
    return JSON.encode(arguments).decode()


def placement_of(wire: str, request: ChatRequest, default: Placement,
                 placements: tuple[Placement, ...]) -> Placement:
    """The placement a request asks for (None: the wire's own), if the wire can encode it."""
    placement = request.placement or default
    if placement not in placements:
        raise ValueError(f"{wire} places tool images: {', '.join(placements)}; "
                         f"not {placement!r}")
    return placement


@dataclass(frozen=True, slots=True)
class Carrier:
    """The alternate placement's user-role message after a run of tool results: for each result
    with images, its caption then its images, in the wire's own parts."""

    parts: list[dict[str, Any]]


def with_carriers(messages: Iterable[Message], placement: Placement,
                  parts: Callable[[ToolResultMessage], list[dict[str, Any]]],
                  ) -> Iterator[Message | Carrier]:
    """The messages in order and, in the alternate placement, a `Carrier` right after each run of
    tool results that carries images — after the run's last result, never inside it: tool
    results must follow the calls unbroken. `parts` writes one result's caption and images."""
    carried: list[dict[str, Any]] = []
    for message in messages:
        if carried and not isinstance(message, ToolResultMessage):
            yield Carrier(carried)
            carried = []
        yield message
        if placement == "alternate" and isinstance(message, ToolResultMessage) and message.images:
            carried.extend(parts(message))
    if carried:
        yield Carrier(carried)
