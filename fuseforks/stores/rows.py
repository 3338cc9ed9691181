"""Stored rows back into envelopes — the one decoding every SQL store shares.

A row of the current schema version decodes straight into the typed event; an older one goes
through the upcasters with its turn's context (one context per turn, filled in seq order).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from fuseforks.events.codec import SCHEMA_VERSION, Envelope, TurnContexts, decode_event
from fuseforks.events.types import TurnEvent

_decode_current = msgspec.json.Decoder(TurnEvent).decode

TurnRow = tuple[int, int, str, bytes]
"""seq, version, at, body of one turn's event."""
Row = tuple[str, int, int, str, bytes]
"""turn_id, seq, version, at, body of an event of any turn."""


def turn_envelopes(turn_id: str, rows: Iterable[TurnRow]) -> list[Envelope]:
    """The envelopes of one turn's rows, in the order given (seq order)."""
    context: dict[str, object] = {}
    return [
        Envelope(turn_id=turn_id, seq=seq, at=at,
                 event=_decode_current(body) if version == SCHEMA_VERSION
                 else decode_event(body, version, context))
        for seq, version, at, body in rows
    ]


def envelopes(rows: Iterable[Row]) -> list[Envelope]:
    """The envelopes of rows from any turns, each turn upcast with its own context."""
    contexts = TurnContexts()
    return [
        Envelope(turn_id=turn_id, seq=seq, at=at,
                 event=_decode_current(body) if version == SCHEMA_VERSION
                 else decode_event(body, version, contexts(turn_id)))
        for turn_id, seq, version, at, body in rows
    ]
