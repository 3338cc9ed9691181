"""What the record has learned about each model: where it takes tool images, and where not.

A projection over every turn's `PlacementLearned` events, per (wire, model, endpoint host): when
each placement was last received and last refused. A new turn to that model starts with the
placement known to work — the alternate one when the native one was refused more recently than it
was received — and goes back to probing the native one once that refusal is older than the
re-probe age: providers change what their models accept, and a static table would go stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import msgspec

from fuseforks.core.names import Placement, WireName
from fuseforks.events.codec import Envelope
from fuseforks.events.types import PlacementLearned

DEFAULT_REPROBE_AFTER = timedelta(days=7)


class Capability(msgspec.Struct, frozen=True, kw_only=True):
    wire: WireName
    model: str
    endpoint_host: str
    placement: Placement
    last_received: str | None = None
    last_refused: str | None = None


Key = tuple[str, str, str, str]


def capabilities(envelopes: Iterable[Envelope], known: Iterable[Capability] = ()
                 ) -> list[Capability]:
    """One row per (wire, model, endpoint host, placement), in first-seen order: the `known`
    rows with what `envelopes` add (so a long-running agent folds only its new turns)."""
    rows: dict[Key, Capability] = {
        (r.wire, r.model, r.endpoint_host, r.placement): r for r in known}
    for envelope in envelopes:
        event = envelope.event
        if not isinstance(event, PlacementLearned):
            continue
        key = (event.wire, event.model, event.endpoint_host, event.placement)
        row = rows.get(key) or Capability(wire=event.wire, model=event.model,
                                          endpoint_host=event.endpoint_host,
                                          placement=event.placement)
        if event.outcome == "received":
            row = msgspec.structs.replace(row, last_received=max(row.last_received or "",
                                                                 envelope.at))
        else:
            row = msgspec.structs.replace(row, last_refused=max(row.last_refused or "",
                                                                envelope.at))
        rows[key] = row
    return list(rows.values())


def _instant(at: str) -> datetime:
    return datetime.fromisoformat(at.replace("Z", "+00:00"))


def start_placement(known: Iterable[Capability], *, wire: WireName, model: str,
                    endpoint_host: str, own: Placement, now: datetime,
                    reprobe_after: timedelta = DEFAULT_REPROBE_AFTER) -> Placement:
    """The placement a new turn to this model starts with."""
    if own != "native":
        return own
    for row in known:
        if (row.wire, row.model, row.endpoint_host, row.placement) != (
                wire, model, endpoint_host, "native") or row.last_refused is None:
            continue
        refused_last = row.last_received is None or row.last_refused > row.last_received
        if refused_last and now - _instant(row.last_refused) < reprobe_after:
            return "alternate"
    return own
