"""Audit rows: which tool produced each image, and which requests carried it where.

A pure fold over a turn's events. An *origin* is where an image came from (tool, server, round,
format, size); a *delivery* (`fuseforks.projections.deliveries`, the one fold every reader of
"where did this image go" uses) is one image on one request with its outcome — `received`,
`refused` or `unanswered` — and whether the turn then stripped it. The SQL stores answer the same
questions with views over the same events (`fuseforks.stores.audit_sql`); a test holds the two to
the same rows.

A gateway session's images go to an MCP client, not a provider: each image a tool result took
back to the client is a client delivery (`ClientDeliveryRow`, from the same fold module), so the
audit names the client where it names a provider.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import msgspec

from fuseforks.core.errors import ConfigError
from fuseforks.core.names import ImagePath
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ImagesNormalized, ToolCalled
from fuseforks.projections.deliveries import (
    ClientDeliveryRow,
    DeliveryRow,
    Outcome,
    TurnStop,
    client_delivery_rows,
    delivery_rows,
)

__all__ = ["AuditFilter", "AuditRows", "ClientDeliveryRow", "DeliveryRow", "OriginRow", "Outcome",
           "TurnStop", "at_key", "audit_rows", "csv_text", "digests", "select", "since_key", "with_clients"]


class OriginRow(msgspec.Struct, frozen=True, kw_only=True):
    digest: str
    turn_id: str
    seq: int
    image: int
    """Its place among the images its tool result kept (from 0)."""
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


class AuditRows(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    origins: list[OriginRow]
    deliveries: list[DeliveryRow]
    client_deliveries: list[ClientDeliveryRow] = []


def origins_of(envelope: Envelope, event: ImagesNormalized,
               called: ToolCalled | None) -> list[OriginRow]:
    """The origins of one `ImagesNormalized`: one per kept image, named after its call."""
    return [OriginRow(digest=m.digest, turn_id=envelope.turn_id, seq=envelope.seq,
                      image=position, at=envelope.at, round=event.round,
                      call_id=event.call_id, tool=called.name if called else "",
                      server=called.server if called else "", source_format=m.source_format,
                      media_type=m.media_type, path=m.path, width=m.width, height=m.height,
                      size=m.size)
            for position, m in enumerate(event.images)]


def origin_rows(history: Iterable[Envelope]) -> list[OriginRow]:
    """Where each kept image of the given envelopes came from, in order."""
    origins: list[OriginRow] = []
    calls: dict[tuple[str, str], ToolCalled] = {}
    for envelope in history:
        event, turn = envelope.event, envelope.turn_id
        if isinstance(event, ToolCalled):
            calls[(turn, event.call_id)] = event
        elif isinstance(event, ImagesNormalized):
            origins += origins_of(envelope, event, calls.get((turn, event.call_id)))
    return origins


def audit_rows(history: Iterable[Envelope]) -> AuditRows:
    """Every image origin and delivery (to a provider or a gateway client) of the given
    envelopes (one turn or many, in order)."""
    envelopes = list(history)
    return AuditRows(origins=origin_rows(envelopes), deliveries=delivery_rows(envelopes),
                     client_deliveries=client_delivery_rows(envelopes))


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


_DURATION = re.compile(r"(\d+)\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_HEX = re.compile(r"[0-9a-f]{4,64}")
SINCE_FORMS = ("ISO-8601 time (2026-11-30T08:48:54Z, 2026-11-30T09:48+01:00, 2026-11-30)",
               "duration back from now (30m, 2h, 7d)")
"""What a person may write for a moment, as the refusal of anything else names it."""


def moment_key(text: str, now: datetime) -> str:
    """A moment as a person writes it — ISO-8601 with any offset (UTC without one), or a
    duration meaning that long before `now` — as a `since_key`. ValueError for anything else."""
    text = text.strip()
    duration = _DURATION.fullmatch(text)
    try:
        if duration is not None:
            amount, unit = duration.groups()
            moment = now - timedelta(**{_UNITS[unit]: int(amount)})
        else:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        return since_key(moment)
    except (ValueError, OverflowError):
        raise ConfigError(f"{text!r} is neither an {SINCE_FORMS[0]} nor a "
                         f"{SINCE_FORMS[1]}") from None


def digest_prefix(text: str) -> str:
    """An image digest as a person gives it — the SHA-256, or its first 4 hex characters or
    more, in any case — in lowercase. ValueError for anything else."""
    prefix = text.strip().lower()
    if _HEX.fullmatch(prefix) is None:
        raise ConfigError(f"{text!r} is not an image digest: give 4 to 64 hex characters of its "
                         "SHA-256")
    return prefix


def _format_ms(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class AuditFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which rows an audit asks for; every field left None matches everything.

    `digest` is a full digest (a prefix is resolved to one first); `since` (inclusive) and
    `until` (exclusive) are `since_key`s."""

    digest: str | None = None
    wire: str | None = None
    model: str | None = None
    tool: str | None = None
    since: str | None = None
    client: str | None = None
    """A gateway client's name: only images sent to it (no provider delivery matches)."""
    until: str | None = None
    outcome: Outcome | None = None
    """What the provider did with the request (a client delivery has no outcome: none
    matches)."""

    def keeps(self, row: DeliveryRow) -> bool:
        if self.client is not None or not self._keeps(row.digest, row.tool, row.at):
            return False
        return ((self.wire is None or row.wire == self.wire)
                and (self.model is None or row.model == self.model)
                and (self.outcome is None or row.outcome == self.outcome))

    def keeps_client(self, row: ClientDeliveryRow) -> bool:
        """A client delivery matches no provider, model or outcome filter, and `client` by
        name."""
        if self.wire is not None or self.model is not None or self.outcome is not None:
            return False
        return ((self.client is None or row.client == self.client)
                and self._keeps(row.digest, row.tool, row.at))

    def _keeps(self, digest: str, tool: str, at: str) -> bool:
        if self.since is not None or self.until is not None:
            key = at_key(at)
            if key is None or (self.since is not None and key < self.since) or (
                    self.until is not None and key >= self.until):
                return False
        return ((self.digest is None or digest == self.digest)
                and (self.tool is None or tool == self.tool))


def select(rows: AuditRows, where: AuditFilter) -> AuditRows:
    """The rows an audit shows: the origins of the digest asked for (none without one) and the
    matching deliveries, both oldest first — the order of the SQL views' queries."""
    origins = [o for o in rows.origins if where.digest is not None and o.digest == where.digest]
    return AuditRows(
        origins=sorted(origins, key=lambda o: (o.at, o.turn_id, o.seq, o.image)),
        deliveries=sorted((d for d in rows.deliveries if where.keeps(d)),
                          key=lambda d: (d.at, d.turn_id, d.request_seq, d.image)),
        client_deliveries=select_clients(rows.client_deliveries, where),
    )


def with_clients(rows: AuditRows, sent: Iterable[Envelope], where: AuditFilter) -> AuditRows:
    """`rows` (origins and provider deliveries, as a store's SQL answers them) completed with
    the client deliveries `where` asks for, from a store's `ResultSent` envelopes; a `client`
    filter leaves no provider delivery."""
    return AuditRows(origins=rows.origins,
                     deliveries=rows.deliveries if where.client is None else [],
                     client_deliveries=select_clients(client_delivery_rows(sent), where))


def select_clients(rows: Iterable[ClientDeliveryRow],
                   where: AuditFilter) -> list[ClientDeliveryRow]:
    return sorted((r for r in rows if where.keeps_client(r)),
                  key=lambda r: (r.at, r.session_id, r.seq, r.image))


def digests(rows: AuditRows) -> set[str]:
    """Every image digest the rows name (produced by a tool, carried by a request or sent to a
    client)."""
    return ({o.digest for o in rows.origins} | {d.digest for d in rows.deliveries}
            | {d.digest for d in rows.client_deliveries})


def csv_text(rows: Iterable[DeliveryRow] | Iterable[ClientDeliveryRow],
             kind: type[DeliveryRow] | type[ClientDeliveryRow] = DeliveryRow) -> str:
    """Delivery rows as CSV, a header of `kind`'s fields first: what `fuseforks audit --csv`
    prints and the console's audit page downloads."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(kind.__struct_fields__)
    for row in rows:
        writer.writerow(msgspec.structs.astuple(row))
    return out.getvalue()
