"""The stored envelope and its codec — one module-level encoder and decoder, built once.

An envelope is `(turn_id, seq, version, at, event)`: the event is the domain fact, the rest is where
it sits in its turn's history. `version` is the schema version the event was written under; an
older event is upcast on read, a newer one is refused rather than misread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from fuseforks.errors import NewerSchemaError
from fuseforks.events.types import TurnEvent

SCHEMA_VERSION = 1
"""Bump when an event changes in a way msgspec's additive rules cannot absorb; add an upcaster."""


class Envelope(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    seq: int
    version: int = SCHEMA_VERSION
    at: str
    event: TurnEvent

    @property
    def kind(self) -> str:
        return type(self.event).__name__


class _RawEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    seq: int
    version: int = SCHEMA_VERSION
    at: str
    event: msgspec.Raw


_encoder = msgspec.json.Encoder()
_event_decoder: msgspec.json.Decoder[TurnEvent] = msgspec.json.Decoder(TurnEvent)
_raw_decoder = msgspec.json.Decoder(_RawEnvelope)
_dict_decoder = msgspec.json.Decoder(dict[str, Any])

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
_UPCASTERS: dict[tuple[int, str], Upcaster] = {}


def upcaster(from_version: int, kind: str) -> Callable[[Upcaster], Upcaster]:
    """Register a function turning a `kind` event body of `from_version` into `from_version + 1`."""

    def register(function: Upcaster) -> Upcaster:
        _UPCASTERS[(from_version, kind)] = function
        return function

    return register


def encode_event(event: TurnEvent) -> bytes:
    return _encoder.encode(event)


def encode_envelope(envelope: Envelope) -> bytes:
    return _encoder.encode(envelope)


def decode_event(body: bytes | str, version: int = SCHEMA_VERSION) -> TurnEvent:
    """Decode one event body written under `version`, upcasting it if it is older."""
    if version == SCHEMA_VERSION:
        return _event_decoder.decode(body)
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"event written by schema version {version}; this fuseforks reads up to "
            f"{SCHEMA_VERSION} — upgrade fuseforks to read it"
        )
    data = _dict_decoder.decode(body)
    for step in range(version, SCHEMA_VERSION):
        transform = _UPCASTERS.get((step, str(data.get("kind"))))
        if transform is not None:
            data = transform(data)
    return msgspec.convert(data, TurnEvent)


def decode_envelope(line: bytes | str) -> Envelope:
    raw = _raw_decoder.decode(line)
    return Envelope(
        turn_id=raw.turn_id,
        seq=raw.seq,
        version=SCHEMA_VERSION,
        at=raw.at,
        event=decode_event(raw.event, raw.version),
    )


# --- upcasters: schema version 0 -> 1 ------------------------------------------------------------
# Version 0 streams (the first recorder) named the wire `backend`, had no village language or
# endpoint host, called a tool's name `tool` and its arguments `args`, and a result's body `text`.


@upcaster(0, "TurnStarted")
def _turn_started_v0(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data["wire"] = data.pop("backend")
    data.setdefault("language", "ja")
    data.setdefault("endpoint_host", "")
    return data


@upcaster(0, "ToolCalled")
def _tool_called_v0(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data["name"] = data.pop("tool")
    args = data.pop("args", "{}")
    data["arguments"] = args if isinstance(args, str) else _encoder.encode(args).decode()
    return data


@upcaster(0, "ToolResultRecorded")
def _tool_result_v0(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data["body"] = data.pop("text")
    data["image_digests"] = data.pop("digests", [])
    return data
