"""Envelopes into stored bodies and stored rows back into envelopes — the one encoding and the
one decoding every store shares.

Encoding is the last guard before anything is kept: an event body that holds pixels (a base64
image, raw image bytes) is refused with the whole batch, by every store alike.

A row of the current schema version decodes straight into the typed event; an older one goes
through the upcasters with its turn's context (one context per turn, filled in seq order).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from fuseforks.events.codec import (
    SCHEMA_VERSION,
    Envelope,
    TurnContexts,
    decode_event,
    encode_event,
)
from fuseforks.events.privacy import PixelLeakError, find_pixel_leak
from fuseforks.events.sequencer import Sealed
from fuseforks.events.types import TurnEvent

_decode_current = msgspec.json.Decoder(TurnEvent).decode

TurnRow = tuple[int, int, str, bytes | str]
"""seq, version, at, body of one turn's event."""
Row = tuple[str, int, int, str, bytes | str]
"""turn_id, seq, version, at, body of an event of any turn."""


def guarded_bodies(store: str, envelopes: Sequence[Envelope]) -> list[str]:
    """The JSON body of each envelope's event, as stored; `PixelLeakError` (naming `store`, the
    event and what it holds) for the first one that holds pixels, before anything is kept.

    The bodies of a batch the engine sealed were checked at sealing (`Sealed`): they are kept as
    they are. Every other envelope — an import, a stream from elsewhere — is checked here."""
    vetted = envelopes.bodies if isinstance(envelopes, Sealed) else [None] * len(envelopes)
    bodies = []
    for e, sealed in zip(envelopes, vetted, strict=True):
        body = sealed
        if body is None:
            body = encode_event(e.event)
            leak = find_pixel_leak(body)
            if leak is not None:
                raise PixelLeakError(
                    f"{store}: refusing to store {e.kind} #{e.seq}: it holds {leak}")
        bodies.append(body.decode())
    return bodies


def decode_current(body: bytes | str) -> TurnEvent:
    """An event body written in the current schema version."""
    return _decode_current(body)


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
