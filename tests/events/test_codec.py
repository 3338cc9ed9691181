from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from fuseforks.core.errors import NewerSchemaError
from fuseforks.events.codec import (
    SCHEMA_VERSION,
    Envelope,
    decode_envelope,
    decode_event,
    encode_envelope,
    encode_event,
)
from fuseforks.events.types import (
    EVENT_TYPES,
    ImagesStripped,
    RequestRefused,
    RequestSent,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnStarted,
)
from fuseforks.stores.jsonl import read_stream
from tests.events.samples import SAMPLES

FIXTURES = Path(__file__).parent / "fixtures"


def test_samples_cover_every_event_kind() -> None:
    assert {type(e) for e in SAMPLES} == set(EVENT_TYPES)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_the_codec(event) -> None:
    body = encode_event(event)
    assert msgspec.json.decode(body)["kind"] == type(event).__name__
    assert decode_event(body) == event
    envelope = Envelope(turn_id="t1", seq=7, at="2026-11-30T00:00:00.000Z", event=event)
    assert decode_envelope(encode_envelope(envelope)) == envelope


def test_envelope_carries_turn_seq_version_and_time() -> None:
    envelope = Envelope(turn_id="t1", seq=3, at="2026-11-30T00:00:00.000Z", event=SAMPLES[1])
    assert msgspec.json.decode(encode_envelope(envelope)) == {
        "turn_id": "t1",
        "seq": 3,
        "version": SCHEMA_VERSION,
        "at": "2026-11-30T00:00:00.000Z",
        "event": {"kind": "RoundStarted", "round": 1},
    }


def test_a_digest_that_is_not_sha256_hex_is_refused_on_decode() -> None:
    stripped = next(e for e in SAMPLES if isinstance(e, ImagesStripped))
    body = encode_event(stripped).replace(b'"digests":["', b'"digests":["ZZ')
    with pytest.raises(msgspec.ValidationError):
        decode_event(body)


def test_a_session_start_recorded_before_tool_filters_reads_with_none() -> None:
    started = next(e for e in SAMPLES if isinstance(e, SessionStarted))
    body = msgspec.json.decode(encode_event(started))
    assert body["tool_filters"]  # the sample records some
    del body["tool_filters"]
    older = decode_event(msgspec.json.encode(body))
    assert older == msgspec.structs.replace(started, tool_filters=[])


def test_version_0_stream_upcasts_to_the_current_events() -> None:
    envelopes = read_stream(FIXTURES / "v0_turn.jsonl")
    started, called, result = (envelopes[0].event, envelopes[3].event, envelopes[4].event)
    assert isinstance(started, TurnStarted)
    assert (started.wire, started.language, started.endpoint_host) == ("gemini", "ja", "")
    assert isinstance(called, ToolCalled)
    assert (called.name, called.arguments) == ("nik__live_view_image", '{"zoom":2}')
    assert isinstance(result, ToolResultRecorded)
    assert result.body == '{"seq":1}'
    assert result.image_digests == [
        "8b8e7f5d0b4b8b2a0ef1a1a9e0f1b6b4a45f0c7e5e4b1f6a9c2d3e4f5a6b7c8d"
    ]
    assert [e.version for e in envelopes] == [SCHEMA_VERSION] * len(envelopes)


def test_an_event_from_a_newer_schema_is_refused_not_misread() -> None:
    line = (
        b'{"turn_id":"t","seq":1,"version":%d,"at":"x","event":{"kind":"RoundStarted","round":1}}'
        % (SCHEMA_VERSION + 1)
    )
    with pytest.raises(NewerSchemaError, match="upgrade fuseforks"):
        decode_envelope(line)


def test_version_1_stream_upcasts_its_implied_inputs_to_recorded_fields() -> None:
    """Version 1 left the limits, the placement and the summary instruction to code and defaults;
    version 2 records them. A resend is a summary call only when it follows one (turn context)."""
    events = [e.event for e in read_stream(FIXTURES / "v1_turn.jsonl")]
    started = events[0]
    assert isinstance(started, TurnStarted)
    assert (started.max_rounds, started.image_cap, started.placement) == (8, 20, "alternate")
    assert started.summary_instruction == (
        "本次请求的工具轮次已结束。请不要再调用任何工具，现在根据上面的工具结果回答用户。")
    sent = [e for e in events if isinstance(e, RequestSent)]
    assert [(s.purpose, s.summary) for s in sent] == [
        ("round", False), ("resend", False), ("summary", True), ("resend", True)]
    assert [type(e).__name__ for e in events] == [
        "TurnStarted", "RoundStarted", "RequestSent", "JpegResent", "RequestSent", "RequestSent",
        "RequestRefused", "RequestSent", "TurnEnded"]
    refused = events[6]
    assert isinstance(refused, RequestRefused) and refused.status == 413
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.stop == "answered" and ended.answer == "好"
