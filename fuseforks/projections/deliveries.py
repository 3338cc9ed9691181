"""Where each tool image went, and whether it was received: one fold, read by every reader.

A *delivery* is one tool image on one request: the placement the request put it in, and what the
provider did with that request — `received` (it answered), `refused` (400, or the images
rejected) or `unanswered` (the call failed otherwise, was interrupted, or the record ends) — and
whether the turn then took the image off (`stripped`: the image fallback). On the placement
ladder an image has several deliveries: a refused one in the native placement, then a received
one in the alternate placement. The image *was delivered* where a request carrying it was last
received (`delivered`).

`TurnResult.images`, the audit rows (and so `fuseforks audit`, whose SQL views a test holds to
the same rows), the demo's table, `chat`'s `/audit`, `fuseforks turns` and the chat spans all
read this fold, so they cannot disagree about where an image went.

A gateway session delivers to an MCP client rather than a provider: each image a tool result took
back to the client is a *client delivery* (`ClientDeliveryRow`), read from `ResultSent`, which
names everything the row needs (the client, its version, the tool and its server).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from fuseforks.core.names import McpMethod, Placement, RequestPurpose, StopReason, WireName
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImagesStripped,
    RequestRefused,
    RequestSent,
    ResponseReceived,
    ResultSent,
    ToolCalled,
    TurnEnded,
)

Outcome = Literal["received", "refused", "unanswered"]
TurnStop = StopReason | Literal["cut"]


class SentRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request of a turn, the tool images it carried and what became of it."""

    seq: int
    at: str
    sent: RequestSent
    tools: tuple[str, ...]
    """The tool each image came from, by position (its call's name; "" when not recorded)."""
    outcome: Outcome = "unanswered"
    stripped: bool = False


class Deliveries(msgspec.Struct, frozen=True, kw_only=True):
    """One turn's requests, folded from its events."""

    turn_id: str = ""
    tools: dict[str, str] = {}
    """Call id -> tool name."""
    requests: tuple[SentRequest, ...] = ()
    waiting: bool = False
    """The last request awaits its answer or refusal."""
    stop: TurnStop = "cut"
    """How the turn ended; `cut` while its record has no end."""


class RequestImage(msgspec.Struct, frozen=True, kw_only=True):
    """One image on one request, as the request carried it: what never changes of a delivery."""

    digest: str
    turn_id: str
    request_seq: int
    image: int
    """Its place among the images of its request (from 0): the same image may be there twice
    (one picture returned by two tools)."""
    at: str
    round: int
    purpose: RequestPurpose
    wire: WireName
    model: str
    endpoint_host: str
    placement: Placement
    call_id: str
    tool: str


class RequestOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What became of one request that carried tool images: it settles once."""

    turn_id: str
    request_seq: int
    outcome: Outcome
    stripped: bool


class DeliveryRow(RequestImage, frozen=True, kw_only=True):
    """One image on one request, as the audit lists it: the image as carried, what became of
    its request, and how its turn ended."""

    outcome: Outcome
    stripped: bool
    turn_stop: TurnStop
    """How the request's turn ended; `cut` when its record has no end (the process died)."""


class ClientDeliveryRow(msgspec.Struct, frozen=True, kw_only=True):
    """One image a gateway session sent back to its MCP client with a tool result."""

    digest: str
    session_id: str
    seq: int
    image: int
    """Its place among the images sent with the result (from 0)."""
    at: str
    call: int
    """The call's number in its session."""
    call_id: str
    tool: str
    """The tool, or the resource's URI or the prompt's name (`method`)."""
    server: str
    client: str
    client_version: str
    method: McpMethod = "tools/call"


def _settle(state: Deliveries, outcome: Outcome) -> Deliveries:
    if not state.waiting:
        return state
    last = msgspec.structs.replace(state.requests[-1], outcome=outcome)
    return msgspec.structs.replace(state, requests=(*state.requests[:-1], last), waiting=False)


def evolve_deliveries(state: Deliveries, envelope: Envelope) -> Deliveries:
    """The fold's step: one envelope of the state's turn."""
    replace = msgspec.structs.replace
    event = envelope.event
    match event:
        case ToolCalled():
            return replace(state, turn_id=envelope.turn_id,
                           tools={**state.tools, event.call_id: event.name})
        case RequestSent():
            sent = SentRequest(
                seq=envelope.seq, at=envelope.at, sent=event,
                tools=tuple(state.tools.get(d.call_id, "") for d in event.images))
            return replace(state, turn_id=envelope.turn_id, requests=(*state.requests, sent),
                           waiting=True)
        case ResponseReceived():
            return _settle(state, "received")
        case RequestRefused():
            return _settle(state, "refused")
        case ImagesStripped() if state.requests and state.requests[-1].outcome == "refused":
            last = replace(state.requests[-1], stripped=True)
            return replace(state, requests=(*state.requests[:-1], last))
        case TurnEnded():
            return replace(state, turn_id=envelope.turn_id, waiting=False, stop=event.stop)
        case _:
            return state


def deliveries(history: Iterable[Envelope]) -> Deliveries:
    """The fold over one turn's envelopes."""
    state = Deliveries()
    for envelope in history:
        state = evolve_deliveries(state, envelope)
    return state


def images_of(state: Deliveries, request: SentRequest) -> list[RequestImage]:
    """The images one request carried."""
    sent = request.sent
    return [
        RequestImage(
            digest=image.digest, turn_id=state.turn_id, request_seq=request.seq,
            image=position, at=request.at, round=sent.round, purpose=sent.purpose,
            wire=sent.wire, model=sent.model, endpoint_host=sent.endpoint_host,
            placement=image.placement, call_id=image.call_id, tool=tool)
        for position, (image, tool) in enumerate(zip(sent.images, request.tools, strict=True))
    ]


def outcome_of(state: Deliveries, request: SentRequest) -> RequestOutcome:
    return RequestOutcome(turn_id=state.turn_id, request_seq=request.seq,
                          outcome=request.outcome, stripped=request.stripped)


def rows_of(state: Deliveries, request: SentRequest) -> list[DeliveryRow]:
    """One request's deliveries: its images, its outcome, the turn's end."""
    return [DeliveryRow(**msgspec.structs.asdict(image), outcome=request.outcome,
                        stripped=request.stripped, turn_stop=state.stop)
            for image in images_of(state, request)]


def delivery_rows(history: Iterable[Envelope]) -> list[DeliveryRow]:
    """Every delivery of the given envelopes (one turn or many, interleaved or not), in the order
    their requests were recorded."""
    turns: dict[str, Deliveries] = {}
    order: list[tuple[str, int]] = []  # (turn, index of its request) of each request with images
    for envelope in history:
        turn = envelope.turn_id
        state = evolve_deliveries(turns.get(turn, Deliveries()), envelope)
        turns[turn] = state
        if isinstance(envelope.event, RequestSent) and envelope.event.images:
            order.append((turn, len(state.requests) - 1))
    return [row for turn, index in order
            for row in rows_of(turns[turn], turns[turn].requests[index])]


def delivered(state: Deliveries) -> list[DeliveryRow]:
    """Each image the turn sent, once, in the order it was first sent: its delivery in the last
    request carrying it that was received, or, when none was, in the last request carrying it."""
    chosen: dict[str, DeliveryRow] = {}
    for request in state.requests:
        for row in rows_of(state, request):
            kept = chosen.get(row.digest)
            if kept is None or row.outcome == "received" or kept.outcome != "received":
                chosen[row.digest] = row
    return list(chosen.values())


def received(state: Deliveries) -> list[SentRequest]:
    """The requests that carried tool images and were answered, in order."""
    return [r for r in state.requests if r.sent.images and r.outcome == "received"]


def client_rows(envelope: Envelope, event: ResultSent) -> list[ClientDeliveryRow]:
    """The client deliveries of one `ResultSent`: one per image it carried."""
    return [ClientDeliveryRow(digest=digest, session_id=envelope.turn_id, seq=envelope.seq,
                              image=position, at=envelope.at, call=event.round,
                              call_id=event.call_id, tool=event.name, server=event.server,
                              client=event.client, client_version=event.client_version,
                              method=event.method)
            for position, digest in enumerate(event.images)]


def client_delivery_rows(history: Iterable[Envelope]) -> list[ClientDeliveryRow]:
    """Every client delivery of the given envelopes, in order (only `ResultSent` counts, so a
    store's `ResultSent` events alone give every row)."""
    return [row for envelope in history if isinstance(event := envelope.event, ResultSent)
            for row in client_rows(envelope, event)]
