"""Audit rows: which tool produced each image, and which requests carried it where.

A pure fold over a turn's events. A delivery is one image on one request; its outcome is what the
provider did with that request — `received` (it answered), `refused` (400 or images rejected) or
`unanswered` (the call failed otherwise, or the recording ends) — and `stripped` says the turn
took the image off after the refusal (the image fallback). The SQLite store answers the same
questions with SQL views over the same events (`fuseforks.stores.audit_sql`); a test holds the two
to the same rows.

A gateway session's images go to an MCP client, not a provider: each image a tool result took
back to the client is a `ClientDeliveryRow` (from `ResultSent`, which names the client, its
version, the tool and its server), so the audit names the client where it names a provider.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Literal

import msgspec

from fuseforks.core.names import ImagePath, Placement, RequestPurpose, StopReason, WireName
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImagesNormalized,
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


class OriginRow(msgspec.Struct, frozen=True, kw_only=True):
    digest: str
    turn_id: str
    seq: int
    at: str
    round: int
    call_id: str
    tool: str
    server: str
    source_format: str
    media_type: str
    path: ImagePath
    width: int
    height: int
    size: int


class DeliveryRow(msgspec.Struct, frozen=True, kw_only=True):
    digest: str
    turn_id: str
    request_seq: int
    at: str
    round: int
    purpose: RequestPurpose
    wire: WireName
    model: str
    endpoint_host: str
    placement: Placement
    call_id: str
    tool: str
    outcome: Outcome
    stripped: bool
    turn_stop: TurnStop
    """How the request's turn ended; `cut` when its record has no end (the process died)."""


class ClientDeliveryRow(msgspec.Struct, frozen=True, kw_only=True):
    """One image a gateway session sent back to its MCP client with a tool result."""

    digest: str
    session_id: str
    seq: int
    at: str
    call: int
    """The call's number in its session."""
    call_id: str
    tool: str
    server: str
    client: str
    client_version: str


class AuditRows(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    origins: list[OriginRow]
    deliveries: list[DeliveryRow]
    client_deliveries: list[ClientDeliveryRow] = []


def audit_rows(history: Iterable[Envelope]) -> AuditRows:
    """Every image origin and delivery of the given envelopes (one turn or many, in order)."""
    origins: list[OriginRow] = []
    deliveries: list[DeliveryRow] = []
    sent: list[ClientDeliveryRow] = []
    calls: dict[tuple[str, str], ToolCalled] = {}
    pending: list[int] = []  # indexes in `deliveries` of the request awaiting its outcome
    refused: list[int] = []  # of the last refused request, until a strip or the next request
    open_turns: dict[str, list[int]] = {}  # indexes of each unended turn's deliveries

    def settle(outcome: Outcome) -> None:
        for i in pending:
            deliveries[i] = msgspec.structs.replace(deliveries[i], outcome=outcome)
        pending.clear()

    for envelope in history:
        event, turn = envelope.event, envelope.turn_id
        match event:
            case ToolCalled():
                calls[(turn, event.call_id)] = event
            case ImagesNormalized():
                called = calls.get((turn, event.call_id))
                origins.extend(
                    OriginRow(
                        digest=m.digest, turn_id=turn, seq=envelope.seq, at=envelope.at,
                        round=event.round, call_id=event.call_id,
                        tool=called.name if called else "", server=called.server if called else "",
                        source_format=m.source_format, media_type=m.media_type, path=m.path,
                        width=m.width, height=m.height, size=m.size,
                    )
                    for m in event.images
                )
            case RequestSent():
                settle("unanswered")
                refused.clear()
                for d in event.images:
                    called = calls.get((turn, d.call_id))
                    pending.append(len(deliveries))
                    open_turns.setdefault(turn, []).append(len(deliveries))
                    deliveries.append(DeliveryRow(
                        digest=d.digest, turn_id=turn, request_seq=envelope.seq, at=envelope.at,
                        round=event.round, purpose=event.purpose, wire=event.wire,
                        model=event.model, endpoint_host=event.endpoint_host,
                        placement=d.placement, call_id=d.call_id,
                        tool=called.name if called else "", outcome="unanswered", stripped=False,
                        turn_stop="cut",
                    ))
            case ResponseReceived():
                settle("received")
            case RequestRefused():
                refused[:] = pending
                settle("refused")
            case ImagesStripped():
                for i in refused:
                    deliveries[i] = msgspec.structs.replace(deliveries[i], stripped=True)
                refused.clear()
            case TurnEnded():
                settle("unanswered")
                for i in open_turns.pop(turn, []):
                    deliveries[i] = msgspec.structs.replace(deliveries[i], turn_stop=event.stop)
            case ResultSent():
                sent.extend(client_rows([envelope]))
            case _:
                pass
    return AuditRows(origins=origins, deliveries=deliveries, client_deliveries=sent)


def client_rows(envelopes: Iterable[Envelope]) -> list[ClientDeliveryRow]:
    """The client deliveries of `ResultSent` envelopes (any others are passed over): each
    names everything a row needs, so a store's `ResultSent` events alone give every row."""
    return [
        ClientDeliveryRow(digest=digest, session_id=envelope.turn_id, seq=envelope.seq,
                          at=envelope.at, call=event.round, call_id=event.call_id,
                          tool=event.name, server=event.server, client=event.client,
                          client_version=event.client_version)
        for envelope in envelopes if isinstance(event := envelope.event, ResultSent)
        for digest in event.images
    ]


# --- selecting rows (the same rules as the SQL in fuseforks.stores.audit_sql) --------------------

_AT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?)?"
    r"\s*(Z|[+-]\d{2}:\d{2})?",
    re.IGNORECASE,
)


def at_key(at: str) -> str | None:
    """A recorded time as `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC, read the way SQLite's
    `strftime('%Y-%m-%dT%H:%M:%fZ', at)` reads it (an offset applied, seconds rounded to the
    millisecond); None when it is not such a time. Clock times are already in this form."""
    match = _AT.fullmatch(at.strip())
    if match is None:
        return None
    year, month, day, hour, minute, seconds, zone = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                          tzinfo=UTC)
    except ValueError:
        return None
    moment += timedelta(milliseconds=int(float(seconds or 0) * 1000 + 0.5))
    if zone and zone.upper() != "Z":
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return _format_ms(moment)


def since_key(moment: datetime) -> str:
    """The smallest `at_key` at or after `moment` (a time with an offset): `moment` in UTC,
    rounded up to the millisecond, because recorded times have milliseconds."""
    moment = moment.astimezone(UTC)
    if moment.microsecond % 1000:
        moment += timedelta(microseconds=1000 - moment.microsecond % 1000)
    return _format_ms(moment)


def _format_ms(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class AuditFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which rows an audit asks for; every field left None matches everything.

    `digest` is a full digest (a prefix is resolved to one first); `since` is a `since_key`."""

    digest: str | None = None
    wire: str | None = None
    model: str | None = None
    tool: str | None = None
    since: str | None = None
    client: str | None = None
    """A gateway client's name: only images sent to it (no provider delivery matches)."""

    def keeps(self, row: DeliveryRow) -> bool:
        if self.client is not None or not self._keeps(row.digest, row.tool, row.at):
            return False
        return ((self.wire is None or row.wire == self.wire)
                and (self.model is None or row.model == self.model))

    def keeps_client(self, row: ClientDeliveryRow) -> bool:
        """A client delivery matches no provider or model filter, and `client` by name."""
        if self.wire is not None or self.model is not None:
            return False
        return ((self.client is None or row.client == self.client)
                and self._keeps(row.digest, row.tool, row.at))

    def _keeps(self, digest: str, tool: str, at: str) -> bool:
        if self.since is not None:
            key = at_key(at)
            if key is None or key < self.since:
                return False
        return ((self.digest is None or digest == self.digest)
                and (self.tool is None or tool == self.tool))


def select(rows: AuditRows, where: AuditFilter) -> AuditRows:
    """The rows an audit shows: the origins of the digest asked for (none without one) and the
    matching deliveries, both oldest first — the order of the SQL views' queries."""
    origins = [o for o in rows.origins if where.digest is not None and o.digest == where.digest]
    return AuditRows(
        origins=sorted(origins, key=lambda o: (o.at, o.turn_id, o.seq)),
        deliveries=sorted((d for d in rows.deliveries if where.keeps(d)),
                          key=lambda d: (d.at, d.turn_id, d.request_seq)),
        client_deliveries=select_clients(rows.client_deliveries, where),
    )


def with_clients(rows: AuditRows, sent: Iterable[Envelope], where: AuditFilter) -> AuditRows:
    """`rows` (origins and provider deliveries, as a store's SQL answers them) completed with
    the client deliveries `where` asks for, from a store's `ResultSent` envelopes; a `client`
    filter leaves no provider delivery."""
    return AuditRows(origins=rows.origins,
                     deliveries=rows.deliveries if where.client is None else [],
                     client_deliveries=select_clients(client_rows(sent), where))


def select_clients(rows: Iterable[ClientDeliveryRow],
                   where: AuditFilter) -> list[ClientDeliveryRow]:
    return sorted((r for r in rows if where.keeps_client(r)),
                  key=lambda r: (r.at, r.session_id, r.seq))


def digests(rows: AuditRows) -> set[str]:
    """Every image digest the rows name (produced by a tool, carried by a request or sent to a
    client)."""
    return ({o.digest for o in rows.origins} | {d.digest for d in rows.deliveries}
            | {d.digest for d in rows.client_deliveries})
