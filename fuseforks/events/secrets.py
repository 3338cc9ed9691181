"""Secrets never reach the record: each one an agent knows is replaced by a marker that names it.

A user may paste `$ANTHROPIC_API_KEY` into a request, a tool may echo its token, a provider may
quote the key it was sent in an error. The model still gets what was typed (the engine folds the
events as they were emitted); what is *published* — to the store, the log, spans, the bus between
processes, exports — holds `[secret: ANTHROPIC_API_KEY]` instead. Because the record is what
replay and takeover re-drive from, they see the marker too, and agree with themselves.

Only exact occurrences of known values are replaced, and only values long enough to be secrets
(`MIN_LENGTH`): every other text — a digest, an id, a word that happens to be some variable's
value — stays byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from fuseforks.events.codec import Envelope, encode_event
from fuseforks.events.sequencer import Sealed
from fuseforks.events.types import TurnEvent

MIN_LENGTH = 8
"""Shorter values (`true`, `debug`, a port) are not secrets, and replacing them would change
ordinary text."""

class Secrets:
    """Values to keep out of the record, each with the name its marker shows.

    Some are learnt while a process runs (an OAuth token obtained or refreshed): `learn` adds
    them, and a `Secrets` that `include`s another knows what that one learns, from then on."""

    def __init__(self, named: Mapping[str, str] | None = None) -> None:
        self._found: dict[str, str] = {}
        self._learnt = 0
        self._included: list[Secrets] = []
        self._built: tuple[object, ...] | None = None
        self._pairs: list[tuple[str, str]] = []
        self._seen: list[bytes] = []
        self.learn(named or {})

    def learn(self, named: Mapping[str, str]) -> None:
        """Know these values too (those long enough to be secrets)."""
        for name, value in named.items():
            if len(value) >= MIN_LENGTH and value.strip() == value and value not in self._found:
                self._found[value] = name
                self._learnt += 1

    def include(self, other: Secrets) -> None:
        """Know every value `other` knows or learns."""
        if other is not self and other not in self._included:
            self._included.append(other)

    def _stamp(self) -> tuple[object, ...]:
        return (self._learnt, tuple(other._stamp() for other in self._included))

    def _all(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for other in self._included:
            found.update(other._all())
        found.update(self._found)
        return found

    def _build(self) -> None:
        stamp = self._stamp()
        if stamp == self._built:
            return
        found = self._all()
        # the longest first: a secret that contains another is replaced whole
        ordered = sorted(found, key=len, reverse=True)
        self._pairs = [(value, f"[secret: {found[value]}]") for value in ordered]
        self._seen = [_json_text(value) for value in ordered]
        self._built = stamp

    def __bool__(self) -> bool:
        self._build()
        return bool(self._pairs)

    def __len__(self) -> int:
        self._build()
        return len(self._pairs)

    def event(self, event: TurnEvent, body: bytes | None = None) -> TurnEvent:
        """`event` with every known secret replaced in its texts (the same object when it holds
        none). One encoding (`body`, when the caller has it) tells whether any is there; only
        then are its texts rewritten."""
        self._build()
        if not self._pairs:
            return event
        if body is None:
            body = encode_event(event)
        if not any(seen in body for seen in self._seen):
            return event
        cleaned = self._texts(msgspec.to_builtins(event))
        return msgspec.convert(cleaned, type(event))

    def text(self, value: str) -> str:
        self._build()
        for secret, marker in self._pairs:
            if secret in value:
                value = value.replace(secret, marker)
        return value

    def _texts(self, value: object) -> object:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self._texts(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._texts(item) for item in value]
        return value

    def batch(self, batch: Sequence[Envelope]) -> Sequence[Envelope]:
        """The envelopes as they may be published. A sealed batch stays sealed: an envelope
        whose event changed loses its vetted body, and the store checks it again."""
        self._build()
        if not self._pairs:
            return batch
        bodies = batch.bodies if isinstance(batch, Sealed) else [None] * len(batch)
        out: list[Envelope] = []
        kept: list[bytes | None] = []
        for envelope, body in zip(batch, bodies, strict=True):
            event = self.event(envelope.event, body)
            if event is envelope.event:
                out.append(envelope)
                kept.append(body)
            else:
                out.append(msgspec.structs.replace(envelope, event=event))
                kept.append(None)
        return Sealed(out, kept)


def _json_text(value: str) -> bytes:
    """How `value` stands inside a JSON string (quotes stripped)."""
    return msgspec.json.encode(value)[1:-1]
