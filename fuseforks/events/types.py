"""The typed vocabulary of a turn.

Events are the truth: every projection (message list, RepeatGuard, `fuseforks.log`, audit rows) is
a fold over them, and replay re-feeds them. So they record the results of every side effect (model
responses, tool outputs, normalization decisions) — but never pixels. No field of any event can hold
bytes (JSON payloads such as tool arguments are carried as JSON *text*), image identities are SHA-256
digests constrained to 64 lowercase hex characters, and `fuseforks.events.privacy` refuses to seal an
event whose text holds a base64 run or an image signature.

Every input a decision depends on is a required field (the round limit, the image cap, the
placement, the summary instruction): changing a default in code never changes the meaning of
history. Schema evolution follows msgspec's rules: new fields get defaults, an existing field's
type never changes; anything else goes through an upcaster (`fuseforks.events.codec`).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from fuseforks.core.canonical import Usage
from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.core.names import (
    DropReason,
    FallbackOutcome,
    GatewayTransport,
    ImagePath,
    InFlight,
    InterruptCause,
    Language,
    LearnedOutcome,
    McpMethod,
    Placement,
    ReadOutcome,
    RefusalKind,
    RequestPurpose,
    SessionEndCause,
    StopReason,
    WireName,
)

Digest = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]
"""SHA-256 of the bytes sent to a provider. The only way an event refers to an image."""



class Event(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag=True, omit_defaults=True
):
    """Base of every event; the `kind` tag is the class name."""


# --- value objects carried inside events -------------------------------------------------------


class ToolSpecRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    name: str
    description: str = ""
    input_schema: str = "{}"
    """JSON text of the tool's input schema."""


class ToolCallRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    call_id: str
    name: str
    arguments: str = "{}"
    """Canonical JSON text (sorted keys) of the arguments — also the RepeatGuard's identity."""
    signature: list[str] = msgspec.field(default_factory=list)
    """A provider's opaque token to echo back (Gemini `thoughtSignature`), in 76-character pieces
    so that it never reads as one long base64 run to the privacy guard — it is not an image."""


class ImageMeta(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What normalization decided for one kept image — everything but the pixels."""

    digest: Digest
    source_format: str
    media_type: str
    path: ImagePath
    width: int
    height: int
    size: int
    source_size: int
    source_width: int = 0
    source_height: int = 0
    """The source's size as seen, before any scaling (0: a record from before it was kept)."""
    frames: int = 1
    """Frames of an animation, or pages, in the source; the first is sent."""
    illegible: bool = False
    """Shrunk to fit a client's byte limit below the size its text needs to be read."""


class ImageDrop(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    index: int
    reason: DropReason
    source_format: str | None = None
    detail: str = ""


class ImageDelivery(msgspec.Struct, frozen=True, kw_only=True):
    """One tool image carried by one request, and where the adapter placed it."""

    digest: Digest
    call_id: str
    placement: Placement


class ServerDown(msgspec.Struct, frozen=True, kw_only=True):
    """A configured MCP server that did not start: its tools were not offered to the model."""

    server: str
    reason: str


class ToolFilterRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A server's allow and deny lists of tools as configured (globs on the server's own tool
    names): only the tools they let through were offered."""

    server: str
    allow: list[str] = msgspec.field(default_factory=list)
    deny: list[str] = msgspec.field(default_factory=list)


class Exchange(msgspec.Struct, frozen=True, kw_only=True):
    """One earlier turn of a conversation as the model sees it again: the request and the final
    answer, text only — no tool call, tool result, image or note from that turn."""

    turn_id: str
    request: str
    answer: str


# --- the turn ----------------------------------------------------------------------------------


class TurnStarted(Event, frozen=True, kw_only=True):
    agent: str
    wire: WireName
    model: str
    endpoint_host: str
    language: Language
    request: str
    system: str = ""
    tools: list[ToolSpecRecord] = msgspec.field(default_factory=list)
    max_rounds: int
    image_cap: int
    placement: Placement
    """Where this turn's requests put tool images."""
    summary_instruction: str
    """Added to the system prompt of the closing summary call, in the village language."""
    conversation_id: str = ""
    history: list[Exchange] = msgspec.field(default_factory=list)
    """The earlier exchanges this turn sends before its request, oldest first: the turn's record
    holds them, so it replays without the rest of its conversation."""
    history_dropped: int = 0
    """Earlier exchanges of the conversation left out by the history budget (oldest first)."""
    servers_down: list[ServerDown] = msgspec.field(default_factory=list)
    """Configured MCP servers that did not start before the turn, and why."""
    learns_placements: bool = True
    """The engine records `PlacementLearned`; false for turns recorded before it did, so that
    today's engine re-drives them to the same events."""
    worker: str = ""
    """The worker process that started the turn (its name); empty for a turn a program ran
    itself, and in records from before workers named themselves."""


class TurnNotStarted(Event, frozen=True, kw_only=True):
    """A turn that could not start (a wire no one serves here, no key for it, an MCP server of
    its tools that did not start): what was asked,
    as it was asked. `TurnEnded` follows with `stop="error"` and the reason; nothing else is
    recorded — no request was sent and no tool called.

    `wire` is the wire name as the request gave it, which may be none of the seven — that can be
    why the turn could not start. `TurnStarted.wire` names one of the seven and keeps its type:
    a name no wire has is recorded here, never as a wire it is not. The kind was added in schema
    version 3, as msgspec's additive rules allow: no earlier stream holds it, and every earlier
    stream reads as before."""

    agent: str
    wire: str
    model: str
    language: Language
    request: str
    system: str = ""
    conversation_id: str = ""
    servers_down: list[ServerDown] = msgspec.field(default_factory=list)
    """Configured MCP servers that did not start, when that is why the turn was not sent (added
    after schema version 4 by msgspec's additive rules: older records read as before)."""


class RoundStarted(Event, frozen=True, kw_only=True):
    round: int


class RequestSent(Event, frozen=True, kw_only=True):
    round: int
    purpose: RequestPurpose = "round"
    wire: WireName
    model: str
    endpoint_host: str
    message_count: int
    images: list[ImageDelivery] = msgspec.field(default_factory=list)
    summary: bool = False
    """The request is (a resend of) the closing summary call: it carries the summary instruction."""


class ResponseReceived(Event, frozen=True, kw_only=True):
    round: int
    text: str = ""
    tool_calls: list[ToolCallRecord] = msgspec.field(default_factory=list)
    usage: Usage = msgspec.field(default_factory=Usage)
    stop_reason: str = ""


class LlmRetried(Event, frozen=True, kw_only=True):
    round: int
    attempt: int
    status: int | None = None
    error_class: str
    code: str = ""
    delay_ms: int


class LlmRetryStopped(Event, frozen=True, kw_only=True):
    round: int
    attempt: int
    status: int | None = None
    error_class: str
    code: str = ""


class JpegResent(Event, frozen=True, kw_only=True):
    """openai-compat: a 400 to a request with WebP images was retried once with JPEG."""

    round: int
    model: str
    converted: int


class ToolCalled(Event, frozen=True, kw_only=True):
    round: int
    call_id: str
    server: str = ""
    name: str
    arguments: str = "{}"
    method: McpMethod = "tools/call"
    """A gateway client's request: a tool call, or a resource read (`name`: the URI) or a prompt
    (`name`: the prompt as the client named it), whose content the gateway delivers the same
    way."""


class ResourceRead(Event, frozen=True, kw_only=True):
    """A resource a tool result linked to (`resource_link`), read by the engine from the
    tool's server (`resources/read`) within a byte and time budget: its URI, the SHA-256 of
    the bytes read and how the read ended — never the bytes. What was read reaches the model in
    the result's body (text) and images like returned content; replay feeds a recorded read
    back like a tool result. Added with schema version 4."""

    round: int
    call_id: str
    uri: str
    outcome: ReadOutcome
    digest: Digest | None = None
    size: int = 0
    """Bytes read (text as UTF-8, blobs decoded)."""
    detail: str = ""


class ImagesNormalized(Event, frozen=True, kw_only=True):
    round: int
    call_id: str
    images: list[ImageMeta]


class ImagesDropped(Event, frozen=True, kw_only=True):
    round: int
    call_id: str
    name: str
    drops: list[ImageDrop]


class ToolResultRecorded(Event, frozen=True, kw_only=True):
    """The tool output as the model reads it: body text plus the digests of its images."""

    round: int
    call_id: str
    name: str
    ok: bool
    body: str
    image_digests: list[Digest] = msgspec.field(default_factory=list)
    attached: bool = True
    fault: str | None = None
    image_offsets: list[int] = msgspec.field(default_factory=list)
    """Where in `body` each image sat among the server's blocks (character offsets); empty: the
    wire's own order (text, then images, or images first where the provider advises it)."""
    shown: str | None = None
    """What a person is shown of the result when it differs from `body`: content annotated for
    the user only is shown and recorded but not sent to the model, content annotated for the
    assistant only is sent but not shown. None: the body."""
    bytes_without_images: int = 0
    """Gateway sessions: the size of the result as the gateway sends it to its client, every
    image's data left out (the JSON text of the other blocks and of the image blocks' frames).
    With the image sizes it decides the result cap; 0 in turns, which have no such limit."""


class ImageCut(msgspec.Struct, frozen=True, kw_only=True):
    """A tool result that lost images to the cap: it keeps its first `keep` images."""

    call_id: str
    keep: int
    removed: int


class ImagesCapped(Event, frozen=True, kw_only=True):
    round: int
    removed: int
    kept: int
    removed_digests: list[Digest] = msgspec.field(default_factory=list)
    cuts: list[ImageCut] = msgspec.field(default_factory=list)


class RequestRefused(Event, frozen=True, kw_only=True):
    """The provider refused a request (400, 413, 422, ...): resending it unchanged would fail."""

    round: int
    purpose: RequestPurpose = "round"
    status: int = 400
    error_type: str = ""
    code: str = ""
    message: str = ""
    images_rejected: bool = False
    refusal: RefusalKind = "other"
    """What the refusal was about (`images_rejected` is `image` or `placement`)."""


class PlacementChanged(Event, frozen=True, kw_only=True):
    """A request carrying tool images was refused where it placed them: the next requests of the
    turn place them in a user-role message after the tool results (captioned as a tool's
    output). The first step of the ladder; stripping is the last."""

    round: int
    model: str
    placement: Placement


class PlacementLearned(Event, frozen=True, kw_only=True):
    """What this turn learned about a model: tool images in `placement` were received or refused.
    Later turns to the same wire, model and endpoint start with a placement known to work."""

    round: int
    wire: WireName
    model: str
    endpoint_host: str
    placement: Placement
    outcome: LearnedOutcome


class ImagesStripped(Event, frozen=True, kw_only=True):
    round: int
    model: str
    removed: int
    digests: list[Digest] = msgspec.field(default_factory=list)
    call_ids: list[str] = msgspec.field(default_factory=list)


class FallbackSettled(Event, frozen=True, kw_only=True):
    """The single resend after `ImagesStripped` came back: ok, or failed."""

    round: int
    model: str
    removed: int
    outcome: FallbackOutcome


class RepeatDetected(Event, frozen=True, kw_only=True):
    round: int
    name: str
    count: int


class TurnInterrupted(Event, frozen=True, kw_only=True):
    """The turn was stopped from outside while it waited on `during`; `TurnEnded` follows.

    Recorded as an input, like a model response: replay interrupts the re-driven turn at the same
    step, so an interrupted turn verifies."""

    round: int
    cause: InterruptCause
    during: InFlight


class TurnTakenOver(Event, frozen=True, kw_only=True):
    """Another process took the turn over where its record stops (the one running it died).

    Recorded at the point the record stopped: right after the request that was sent without a
    recorded answer, or after the tool calls that started without recorded results. The new
    process re-drove the recorded prefix (no provider request and no tool call repeated for a step
    whose result is recorded) and goes on live. What it could not recover is named here: the tool
    images held only in the dead process's memory (`images_lost`: never stored, so never re-sent;
    the model is told in the village language) and the tool calls that may or may not have run
    (`calls_lost`: not re-run, because a tool can have effects; each gets a result saying so).
    A request without a recorded answer is sent again (a new `RequestSent` follows): a provider
    call has no effect besides its answer."""

    round: int
    worker: str
    """The worker that took the turn over."""
    endpoint_host: str
    images_lost: list[Digest] = []
    calls_lost: list[str] = []
    taken_from: str = ""
    """The worker that ran the turn until then (the one that started it, or took it over last);
    empty when the record does not say."""


class TurnEnded(Event, frozen=True, kw_only=True):
    rounds: int
    stop: StopReason
    answer: str = ""
    error: str = ""


# --- a gateway session: an MCP client in front of `fuseforks gateway` ---------------------------
# A session is recorded like a turn (its id in `turn_id`): it starts with `SessionStarted`, each
# tool call is a `ToolCalled` (its `round` the call's number in the session), the result is
# recorded with the same events as a turn's (`ImagesNormalized`, `ImagesDropped`,
# `ToolResultRecorded`, `ImagesCapped` for the client's limit on a whole result), then
# `ResultSent` when it goes back to the client, and `SessionEnded`. A change of the servers'
# tools while the session runs is a `ToolsChanged`, recorded before the client hears of it.


class SessionStarted(Event, frozen=True, kw_only=True):
    """An MCP client began a session with the gateway. The client (its name and version from
    `initialize`) stands where a turn has its provider and model; the limits of the client's
    profile are every input the gateway decides by."""

    agent: str
    """The gateway's name in the record (where a turn names its agent)."""
    client: str
    client_version: str
    transport: GatewayTransport
    profile: str
    limits: ImageLimits
    result_limits: ResultLimits
    language: Language
    """The village language of the notes the gateway adds to results."""
    tools: list[ToolSpecRecord] = msgspec.field(default_factory=list)
    """The tools offered when the session started."""
    servers_down: list[ServerDown] = msgspec.field(default_factory=list)
    tool_filters: list[ToolFilterRecord] = msgspec.field(default_factory=list)
    """The allow and deny lists of each server that has any, in configuration order."""
    changed_tools: list[str] = msgspec.field(default_factory=list)
    """Tools whose description or input schema is not the one the gateway last offered."""
    withheld_tools: list[str] = msgspec.field(default_factory=list)
    """Of those, the ones kept from the client until approved (`--pin`)."""


class ToolsChanged(Event, frozen=True, kw_only=True):
    """The tools the gateway offers changed while the session ran: a server announced a new
    list (`notifications/tools/list_changed`) that is not the one offered before. The gateway's
    decisions at a change, as `SessionStarted` holds them at the start."""

    tools: list[ToolSpecRecord] = msgspec.field(default_factory=list)
    """The tools offered from now on."""
    changed_tools: list[str] = msgspec.field(default_factory=list)
    """Tools whose description or input schema changed now, and is not the one the gateway
    last offered (a tool new to the list is new, not changed)."""
    withheld_tools: list[str] = msgspec.field(default_factory=list)
    """Of those, the ones kept from the client from now on, until approved (`--pin`)."""


class ResultSent(Event, frozen=True, kw_only=True):
    """A tool result went back to the gateway's client, with these images (after the cap).
    Recorded before it is sent. It names the client, the tool and its server itself, so the
    images each client received are found from these events alone."""

    round: int
    call_id: str
    name: str
    server: str = ""
    client: str
    client_version: str = ""
    images: list[Digest] = msgspec.field(default_factory=list)
    method: McpMethod = "tools/call"
    """What the client asked for (`ToolCalled.method`)."""


class SessionEnded(Event, frozen=True, kw_only=True):
    """The session ended: the client closed it, or the gateway stopped. `unanswered`: calls
    that had started and got no result (cancelled with the session)."""

    calls: int
    cause: SessionEndCause
    unanswered: list[str] = msgspec.field(default_factory=list)


TurnEvent = (
    TurnStarted
    | TurnNotStarted
    | RoundStarted
    | RequestSent
    | ResponseReceived
    | LlmRetried
    | LlmRetryStopped
    | JpegResent
    | ToolCalled
    | ResourceRead
    | ImagesNormalized
    | ImagesDropped
    | ToolResultRecorded
    | ImagesCapped
    | RequestRefused
    | PlacementChanged
    | PlacementLearned
    | ImagesStripped
    | FallbackSettled
    | RepeatDetected
    | TurnInterrupted
    | TurnTakenOver
    | TurnEnded
    | SessionStarted
    | ToolsChanged
    | ResultSent
    | SessionEnded
)

EVENT_TYPES: tuple[type[Event], ...] = TurnEvent.__args__
