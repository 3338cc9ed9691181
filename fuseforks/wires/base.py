"""What every wire adapter shares: the endpoint, the encoded HTTP request, the JSON codec."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

import msgspec

from fuseforks.core.canonical import ChatRequest, ChatResponse, Message, ToolResultMessage
from fuseforks.core.errors import WireError, WireGarbage
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.wires.parameters import ParameterTable

# Built once (msgspec perf tips). Key order in the dicts adapters build is the order on the wire.
JSON = msgspec.json.Encoder()


class Credential(Protocol):
    """A cloud's own credentials, used at the HTTP edge for each attempt of a request: AWS
    Signature Version 4, a Google or an Entra ID access token (`credentials.py`). The pure wire
    never sees one."""

    async def headers(self, request: HttpRequest) -> dict[str, str]:
        """The headers that authorize `request` as it will be sent (a signature covers its URL,
        headers and body)."""
        ...

    def secrets(self) -> list[str]:
        """Every secret this credential has handed out so far (tokens, signatures' keys): taken
        out of anything a provider echoes back."""
        ...


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a wire sends: base URL (overridable) and API key (never printed: `repr=False`);
    the API version a cloud's URL names (Azure's `api-version`), and a cloud credential used
    instead of a key."""

    base_url: str
    api_key: str = field(default="", repr=False)
    api_version: str = ""
    credential: Credential | None = field(default=None, repr=False, compare=False)

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


Framing = Literal["sse", "eventstream"]
"""How a streamed answer is framed: server-sent events, or AWS's binary event-stream messages
(Bedrock), each handed to the accumulator as one event."""


@dataclass(frozen=True, slots=True)
class Streaming:
    """How a wire streams: the same request asking for a stream, a fresh accumulator for each
    attempt, and the framing of the answer."""

    encode: Encode
    accumulator: Callable[[], Accumulator]
    framing: Framing = "sse"


CloudCredential = Literal["aws", "google", "azure"]
"""Whose credentials a wire takes when it is given no key (`credentials.py`)."""


@dataclass(frozen=True, slots=True)
class ProviderLimits:
    """What the provider documents about the images of one request (None: nothing documented).
    The engine's own limits (`ENGINE_LIMITS`, `DEFAULT_IMAGE_CAP`) stay within every wire's;
    a turn's cap never exceeds `images_per_request` (docs/providers.md has the sources)."""

    images_per_request: int | None = None
    image_bytes: int | None = None
    edge_px: int | None = None


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
    address: Callable[[Mapping[str, str]], str] | None = None
    """The provider's address read from the environment (a region, a project, a resource) when
    it is not one fixed URL; a `ConfigError` names the variables to set."""
    credential: CloudCredential | None = None
    """The cloud whose credential chain signs a request when no key is given."""
    error_body: Callable[[Mapping[str, str], bytes], bytes] | None = None
    """The error body with what the provider says in its headers folded in (AWS names an
    error's type in `x-amzn-ErrorType`), before `classify` reads it."""
    limits: ProviderLimits = ProviderLimits()
    local: bool = False
    """A server on this machine (Ollama, vLLM, …): its default address is a loopback one."""


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
