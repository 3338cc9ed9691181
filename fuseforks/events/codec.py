"""The stored envelope and its codec — one module-level encoder and decoder, built once.

An envelope is `(turn_id, seq, version, at, event)`: the event is the domain fact, the rest is where
it sits in its turn's history. `version` is the schema version the event was written under; an
older event is upcast on read, a newer one is refused rather than misread. History is never
rewritten: a store keeps each event as it was written, and every reader upcasts.

An upcaster sees one event body and the context of its turn (a dict the upcasters of one turn
share, filled in seq order), because some facts that a newer version records on an event were
only implied by an earlier event of the same turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from fuseforks.core.errors import NewerSchemaError
from fuseforks.events.types import TurnEvent

SCHEMA_VERSION = 4
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

Context = dict[str, Any]
Upcaster = Callable[[dict[str, Any], Context], dict[str, Any]]
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


def encode_stored(turn_id: str, seq: int, version: int, at: str, body: str | bytes) -> bytes:
    """An envelope's JSON around an event body exactly as a store keeps it (the bytes
    `encode_envelope` gives for the decoded event), without decoding the body."""
    raw = msgspec.Raw(body.encode() if isinstance(body, str) else body)
    return _encoder.encode(_RawEnvelope(turn_id=turn_id, seq=seq, version=version, at=at,
                                        event=raw))


def decode_event(
    body: bytes | str, version: int = SCHEMA_VERSION, context: Context | None = None
) -> TurnEvent:
    """Decode one event body written under `version`, upcasting it if it is older.

    `context` is the turn's upcasting context: pass the same dict for every event of one turn, in
    seq order (`TurnContexts` does it for streams that mix turns)."""
    if version == SCHEMA_VERSION:
        return _event_decoder.decode(body)
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"event written by schema version {version}; this fuseforks reads up to "
            f"{SCHEMA_VERSION} — upgrade fuseforks to read it"
        )
    data = _dict_decoder.decode(body)
    context = {} if context is None else context
    for step in range(version, SCHEMA_VERSION):
        transform = _UPCASTERS.get((step, str(data.get("kind"))))
        if transform is not None:
            data = transform(data, context)
    return msgspec.convert(data, TurnEvent)


class TurnContexts:
    """One upcasting context per turn, for readers of streams that interleave turns."""

    def __init__(self) -> None:
        self._contexts: dict[str, Context] = {}

    def __call__(self, turn_id: str) -> Context:
        return self._contexts.setdefault(turn_id, {})


def decode_envelope(line: bytes | str, contexts: TurnContexts | None = None) -> Envelope:
    raw = _raw_decoder.decode(line)
    context = contexts(raw.turn_id) if contexts is not None else None
    return Envelope(
        turn_id=raw.turn_id,
        seq=raw.seq,
        version=SCHEMA_VERSION,
        at=raw.at,
        event=decode_event(raw.event, raw.version, context),
    )


# --- upcasters: schema version 0 -> 1 ------------------------------------------------------------
# Version 0 streams (the first recorder) named the wire `backend`, had no village language or
# endpoint host, called a tool's name `tool` and its arguments `args`, and a result's body `text`.


@upcaster(0, "TurnStarted")
def _turn_started_v0(data: dict[str, Any], context: Context) -> dict[str, Any]:
    data = dict(data)
    data["wire"] = data.pop("backend")
    data.setdefault("language", "ja")
    data.setdefault("endpoint_host", "")
    return data


@upcaster(0, "ToolCalled")
def _tool_called_v0(data: dict[str, Any], context: Context) -> dict[str, Any]:
    data = dict(data)
    data["name"] = data.pop("tool")
    args = data.pop("args", "{}")
    data["arguments"] = args if isinstance(args, str) else _encoder.encode(args).decode()
    return data


@upcaster(0, "ToolResultRecorded")
def _tool_result_v0(data: dict[str, Any], context: Context) -> dict[str, Any]:
    data = dict(data)
    data["body"] = data.pop("text")
    data["image_digests"] = data.pop("digests", [])
    return data


# --- upcasters: schema version 1 -> 2 ------------------------------------------------------------
# Version 1 left decision inputs to defaults and to code: `max_rounds` and `image_cap` were omitted
# when they were 8 and 20, the placement was read from the wire registry, the closing summary's
# instruction was re-derived from the village language, and a normal end was `stop="-"`. Two kinds
# were renamed: `WireRejected400` (it also carried 413 and 422) and `AttachmentFallback` (the
# openai-compat JPEG resend, not the image fallback). The values below are the ones version 1 used;
# they are history, and must not follow later changes to the defaults or the texts.

_V1_PLACEMENT = {"openai-compat": "alternate"}  # every other version-1 wire placed natively
_V1_SUMMARY_INSTRUCTION = {
    "en": (
        "The tool rounds for this request have ended. Do not call any more tools: answer the"
        " user now from what the tool results above show."
    ),
    "ja": (
        "この依頼のツールの周は終わりました。これ以上ツールを呼ばず、上のツールの結果から"
        "いま利用者に答えてください。"
    ),
    "zh": "本次请求的工具轮次已结束。请不要再调用任何工具，现在根据上面的工具结果回答用户。",
}


@upcaster(1, "TurnStarted")
def _turn_started_v1(data: dict[str, Any], context: Context) -> dict[str, Any]:
    data = dict(data)
    data.setdefault("max_rounds", 8)
    data.setdefault("image_cap", 20)
    data["placement"] = _V1_PLACEMENT.get(data["wire"], "native")
    data["summary_instruction"] = _V1_SUMMARY_INSTRUCTION[data["language"]]
    return data


@upcaster(1, "RequestSent")
def _request_sent_v1(data: dict[str, Any], context: Context) -> dict[str, Any]:
    data = dict(data)
    purpose = data.get("purpose", "round")
    # A resend repeats the request it replaces: after a summary call, it is a summary call too.
    summary = purpose == "summary" or (purpose == "resend" and context.get("summary", False))
    context["summary"] = summary
    if summary:
        data["summary"] = True
    return data


@upcaster(1, "TurnEnded")
def _turn_ended_v1(data: dict[str, Any], context: Context) -> dict[str, Any]:
    data = dict(data)
    stop = data.get("stop", "-")
    data["stop"] = {"-": "answered", "aborted": "interrupted"}.get(stop, stop)
    return data


RENAMED = {"WireRejected400": "RequestRefused", "AttachmentFallback": "JpegResent"}
"""Kinds that version 1 wrote under an older name: the stored name, and the kind it is read as."""


@upcaster(1, "WireRejected400")
def _request_refused_v1(data: dict[str, Any], context: Context) -> dict[str, Any]:
    return {**data, "kind": RENAMED["WireRejected400"]}


@upcaster(1, "AttachmentFallback")
def _jpeg_resent_v1(data: dict[str, Any], context: Context) -> dict[str, Any]:
    return {**data, "kind": RENAMED["AttachmentFallback"]}


def stored_kinds(kinds: Iterable[str]) -> list[str]:
    """The names under which events of `kinds` may be stored: each kind, and the older names
    that are read as it (a store that finds events by their stored kind asks for all of them)."""
    wanted = list(dict.fromkeys(kinds))
    return wanted + [old for old, new in RENAMED.items() if new in wanted and old not in wanted]


# --- upcasters: schema version 2 -> 3 ------------------------------------------------------------
# Version 3 says what a refusal was about (`RequestRefused.refusal`) and moves tool images to the
# alternate placement before it strips them. A version-2 engine stripped on any 400 or image
# refusal: such a refusal is upcast as one of the images themselves, which the version-3 engine
# also answers by stripping at once — the recorded decision, kept.


@upcaster(2, "RequestRefused")
def _request_refused_v2(data: dict[str, Any], context: Context) -> dict[str, Any]:
    blamed = data.get("images_rejected", False) or data.get("status", 400) in (400, 413, 422)
    # `images_rejected` is what the refusal was taken for: in version 3 it follows `refusal`.
    return {**data, "refusal": "image" if blamed else "other", "images_rejected": blamed}


@upcaster(2, "TurnStarted")
def _turn_started_v2(data: dict[str, Any], context: Context) -> dict[str, Any]:
    return {**data, "learns_placements": False}


# --- schema version 3 -> 4 ------------------------------------------------------------------------
# Version 4 adds the gateway's sessions (`SessionStarted`, `ResultSent`, `SessionEnded`) and
# `ToolResultRecorded.bytes_without_images`. Nothing of version 3 changes meaning, so no upcaster
# is needed; the version says that a version-3 reader cannot read what a version-4 writer wrote.
