"""Recorded turns as GenAI spans, through the OpenTelemetry SDK: the exact tree and attributes of
the demo scenarios, the cap, refusals with the placement ladder and the fallback, interruptions,
failures and cut records; no content unless asked for, and never base64."""

from __future__ import annotations

import json

import pytest

from fuseforks.events.privacy import find_media
from fuseforks.events.types import (
    LlmRetried,
    LlmRetryStopped,
    RequestSent,
    ResponseReceived,
    ResultSent,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnInterrupted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.traces import capture_content, turn_spans
from fuseforks.traces.spans import time_ns
from tests.traces.support import (
    REPLAYS,
    cut_and_continue,
    finished,
    recorded,
    shape,
    span_of,
    strings,
    trace_of,
)

T0 = 1_795_996_800_000_000_000  # 2026-11-30T00:00:00.000Z, when the replays were recorded
DIGEST = "052074359e0f886f7cb5463ffa08f99d9c9452c7fc964c0a8d41e03109414210"
BODY = '{"height":424,"jpeg_bytes":5108,"seq":1,"width":640}'
REQUEST = "Take one live view with the camera and describe what it shows in one sentence."


def ms(n: int) -> int:
    return T0 + n * 1_000_000


CAMERA_IMAGE = {
    "fuseforks.images.formats": ("JPEG",), "fuseforks.images.media_types": ("image/jpeg",),
    "fuseforks.images.paths": ("pass_through",), "fuseforks.images.widths": (640,),
    "fuseforks.images.heights": (424,), "fuseforks.images.sizes": (5108,),
    "fuseforks.images.source_sizes": (5108,),
}


def turn_attributes(turn_id: str, wire: str, provider: str, model: str) -> dict[str, object]:
    return {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": provider,
        "gen_ai.agent.name": "replay", "gen_ai.conversation.id": f"conv-{turn_id}",
        "gen_ai.request.model": model, "server.address": "127.0.0.1", "fuseforks.wire": wire,
        "fuseforks.turn.id": turn_id, "fuseforks.turn.language": "en",
        "fuseforks.turn.placement": "native", "fuseforks.turn.max_rounds": 8,
        "fuseforks.turn.image_cap": 20, "fuseforks.history.length": 0,
        "fuseforks.history.dropped": 0,
    }


def chat_attributes(wire: str, provider: str, model: str, round_: int, purpose: str,
                    messages: int) -> dict[str, object]:
    return {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": provider,
        "gen_ai.request.model": model, "server.address": "127.0.0.1", "fuseforks.wire": wire,
        "fuseforks.round": round_, "fuseforks.request.purpose": purpose,
        "fuseforks.request.messages": messages,
    }


def camera_tool(turn_id: str, call_id: str) -> dict[str, object]:
    return {
        "name": "execute_tool nik__live_view_image", "trace_id": trace_of(turn_id),
        "span_id": span_of(turn_id, 5), "parent": span_of(turn_id, 1), "kind": "INTERNAL",
        "start": ms(40), "end": ms(60), "status": ("UNSET", None),
        "attributes": {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "nik__live_view_image",
            "gen_ai.tool.call.id": call_id, "gen_ai.tool.type": "function",
            "fuseforks.round": 1, "fuseforks.tool.server": "nik", **CAMERA_IMAGE,
            "fuseforks.tool.outcome": "ok", "fuseforks.tool.body_chars": 52,
            "fuseforks.images.count": 1, "fuseforks.images.digests": (DIGEST,),
            "fuseforks.images.attached": True,
        },
        "events": [],
    }


def test_a_camera_turn_is_one_agent_span_with_two_chat_spans_and_one_tool_span() -> None:
    turn, model = "p4-anthropic", "claude-sonnet-5-5"
    assert shape(finished(recorded(turn))) == [
        {
            "name": "invoke_agent replay", "trace_id": trace_of(turn),
            "span_id": span_of(turn, 1), "parent": None, "kind": "INTERNAL",
            "start": ms(0), "end": ms(110), "status": ("UNSET", None),
            "attributes": {
                **turn_attributes(turn, "anthropic", "anthropic", model),
                "fuseforks.turn.stop": "answered", "fuseforks.turn.rounds": 2,
                "gen_ai.usage.input_tokens": 203, "gen_ai.usage.output_tokens": 20,
                "fuseforks.images.count": 1,
            },
            "events": [],
        },
        {
            "name": f"chat {model}", "trace_id": trace_of(turn), "span_id": span_of(turn, 3),
            "parent": span_of(turn, 1), "kind": "CLIENT", "start": ms(20), "end": ms(30),
            "status": ("UNSET", None),
            "attributes": {
                **chat_attributes("anthropic", "anthropic", model, 1, "round", 1),
                "gen_ai.usage.input_tokens": 101, "gen_ai.usage.output_tokens": 10,
                "gen_ai.response.finish_reasons": ("tool_use",),
                "fuseforks.response.tool_calls": 1, "fuseforks.request.outcome": "received",
            },
            "events": [],
        },
        camera_tool(turn, "toolu_0001_0"),
        {
            "name": f"chat {model}", "trace_id": trace_of(turn), "span_id": span_of(turn, 9),
            "parent": span_of(turn, 1), "kind": "CLIENT", "start": ms(80), "end": ms(90),
            "status": ("UNSET", None),
            "attributes": {
                **chat_attributes("anthropic", "anthropic", model, 2, "round", 3),
                "fuseforks.images.count": 1, "fuseforks.images.digests": (DIGEST,),
                "fuseforks.images.placements": ("native",),
                "fuseforks.images.call_ids": ("toolu_0001_0",),
                "gen_ai.usage.input_tokens": 102, "gen_ai.usage.output_tokens": 10,
                "gen_ai.response.finish_reasons": ("end_turn",),
                "fuseforks.response.tool_calls": 0, "fuseforks.request.outcome": "received",
                "fuseforks.placement.learned": "native:received",
            },
            "events": [],
        },
    ]


def test_a_refused_request_is_an_error_span_and_the_resend_carries_the_fallback() -> None:
    turn, wire, model = "p4-image-refusing", "perplexity-responses", \
        "perplexity/deepseek-v4-pro-0813"
    spans = shape(finished(recorded(turn)))
    assert [(s["name"], s["span_id"], s["status"]) for s in spans] == [
        ("invoke_agent replay", span_of(turn, 1), ("UNSET", None)),
        (f"chat {model}", span_of(turn, 3), ("UNSET", None)),
        ("execute_tool nik__live_view_image", span_of(turn, 5), ("UNSET", None)),
        (f"chat {model}", span_of(turn, 9), ("ERROR", "invalid request")),
        (f"chat {model}", span_of(turn, 14), ("ERROR", "invalid request")),
        (f"chat {model}", span_of(turn, 19), ("UNSET", None)),
    ]
    root, _, tool, refused, moved, resend = spans
    assert (root["start"], root["end"]) == (ms(0), ms(210))
    assert root["attributes"] == {
        **turn_attributes(turn, wire, "perplexity", model),
        "fuseforks.fallback.outcome": "ok", "fuseforks.turn.stop": "answered",
        "fuseforks.turn.rounds": 2, "gen_ai.usage.input_tokens": 205,
        "gen_ai.usage.output_tokens": 20, "fuseforks.images.count": 1,
    }
    assert tool == camera_tool(turn, "call_0001_0")
    refusal = {
        "error.type": "invalid_request_error", "fuseforks.refusal.status": 400,
        "fuseforks.refusal.error_type": "invalid_request_error",
        "fuseforks.refusal.code": "invalid_request",
        "fuseforks.refusal.images_rejected": False, "fuseforks.refusal": "other",
        "fuseforks.request.outcome": "refused",
    }
    # Refused with the image inside the tool result: the ladder's first step.
    assert (refused["start"], refused["end"]) == (ms(80), ms(100))
    assert refused["attributes"] == {
        **chat_attributes(wire, "perplexity", model, 2, "round", 3),
        "fuseforks.images.count": 1, "fuseforks.images.digests": (DIGEST,),
        "fuseforks.images.placements": ("native",),
        "fuseforks.images.call_ids": ("call_0001_0",),
        **refusal, "fuseforks.placement.learned": "native:refused",
    }
    assert refused["events"] == [("fuseforks.llm_call_ended", ms(90), {
        "fuseforks.retry.attempt": 1, "fuseforks.retry.error_class": "client_error",
        "fuseforks.retry.status": 400, "fuseforks.retry.code": "invalid_request",
        "fuseforks.llm_call.end": "refused"})]
    # Resent with the image in a user message, refused again: the image is stripped.
    assert (moved["start"], moved["end"]) == (ms(130), ms(150))
    assert moved["attributes"] == {
        **chat_attributes(wire, "perplexity", model, 2, "resend", 3),
        "fuseforks.placement.changed": "alternate",
        "fuseforks.images.count": 1, "fuseforks.images.digests": (DIGEST,),
        "fuseforks.images.placements": ("alternate",),
        "fuseforks.images.call_ids": ("call_0001_0",),
        **refusal, "fuseforks.placement.learned": "alternate:refused",
        "fuseforks.fallback.stripped": 1, "fuseforks.fallback.stripped_digests": (DIGEST,),
    }
    assert moved["events"] == [("fuseforks.llm_call_ended", ms(140), {
        "fuseforks.retry.attempt": 1, "fuseforks.retry.error_class": "client_error",
        "fuseforks.retry.status": 400, "fuseforks.retry.code": "invalid_request",
        "fuseforks.llm_call.end": "refused"})]
    assert (resend["start"], resend["end"]) == (ms(180), ms(190))
    assert resend["attributes"] == {
        **chat_attributes(wire, "perplexity", model, 2, "resend", 3),
        "gen_ai.usage.input_tokens": 104, "gen_ai.usage.output_tokens": 10,
        "gen_ai.response.finish_reasons": ("end_turn",), "fuseforks.response.tool_calls": 0,
        "fuseforks.request.outcome": "received", "fuseforks.fallback.outcome": "ok",
    }


def test_a_placement_refusal_moves_the_images_and_the_next_request_carries_them() -> None:
    turn, wire, model = "p4-gemini-2.5", "gemini", "gemini-2.5-flash"
    call = "gemini-call-f1c6582acff8-0"
    message = ("Unable to submit request because `function_response.parts` is not supported for "
               "this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/"
               "multimodal/function-calling")
    spans = shape(finished(recorded(turn)))
    assert [(s["name"], s["span_id"], s["status"]) for s in spans] == [
        ("invoke_agent replay", span_of(turn, 1), ("UNSET", None)),
        (f"chat {model}", span_of(turn, 3), ("UNSET", None)),
        ("execute_tool nik__live_view_image", span_of(turn, 5), ("UNSET", None)),
        (f"chat {model}", span_of(turn, 9), ("ERROR", message)),
        (f"chat {model}", span_of(turn, 14), ("UNSET", None)),
    ]
    root, _, tool, refused, moved = spans
    assert (root["start"], root["end"]) == (ms(0), ms(160))
    assert root["attributes"] == {
        **turn_attributes(turn, wire, "gcp.gemini", model),
        "fuseforks.turn.stop": "answered", "fuseforks.turn.rounds": 2,
        "gen_ai.usage.input_tokens": 204, "gen_ai.usage.output_tokens": 20,
        "fuseforks.images.count": 1,
    }
    assert tool == camera_tool(turn, call)
    assert (refused["start"], refused["end"]) == (ms(80), ms(100))
    assert refused["attributes"] == {
        **chat_attributes(wire, "gcp.gemini", model, 2, "round", 3),
        "fuseforks.images.count": 1, "fuseforks.images.digests": (DIGEST,),
        "fuseforks.images.placements": ("native",), "fuseforks.images.call_ids": (call,),
        "error.type": "INVALID_ARGUMENT", "fuseforks.refusal.status": 400,
        "fuseforks.refusal.error_type": "INVALID_ARGUMENT",
        "fuseforks.refusal.code": "INVALID_ARGUMENT",
        "fuseforks.refusal.images_rejected": True, "fuseforks.refusal": "placement",
        "fuseforks.request.outcome": "refused", "fuseforks.placement.learned": "native:refused",
    }
    assert refused["events"] == [("fuseforks.llm_call_ended", ms(90), {
        "fuseforks.retry.attempt": 1, "fuseforks.retry.error_class": "client_error",
        "fuseforks.retry.status": 400, "fuseforks.retry.code": "INVALID_ARGUMENT",
        "fuseforks.llm_call.end": "refused"})]
    assert (moved["start"], moved["end"], moved["events"]) == (ms(130), ms(140), [])
    assert moved["attributes"] == {
        **chat_attributes(wire, "gcp.gemini", model, 2, "resend", 3),
        "fuseforks.placement.changed": "alternate",
        "fuseforks.images.count": 1, "fuseforks.images.digests": (DIGEST,),
        "fuseforks.images.placements": ("alternate",), "fuseforks.images.call_ids": (call,),
        "gen_ai.usage.input_tokens": 103, "gen_ai.usage.output_tokens": 10,
        "gen_ai.response.finish_reasons": ("end_turn",), "fuseforks.response.tool_calls": 0,
        "fuseforks.request.outcome": "received",
        "fuseforks.placement.learned": "alternate:received",
    }


def test_the_cap_is_an_event_of_the_turn_and_attributes_of_the_result_that_lost_images() -> None:
    turn = "cap-at-20"
    spans = shape(finished(recorded(turn)))
    assert [s["name"] for s in spans] == ["invoke_agent replay"] + [
        "chat claude-sonnet-5-5", "execute_tool rig__frame"] * 21 + ["chat claude-sonnet-5-5"]
    root = spans[0]
    removed = "5ad991016baac07b7171145b1284786df72ae693ec7f45ed5618cd19d25e3b38"
    assert root["events"] == [("fuseforks.images_capped", ms(1280), {
        "fuseforks.round": 21, "fuseforks.cap.removed": 1, "fuseforks.cap.kept": 20,
        "fuseforks.cap.removed_digests": (removed,)})]
    assert {k: v for k, v in root["attributes"].items() if k.startswith(
        ("fuseforks.cap", "fuseforks.images", "fuseforks.turn.rounds"))} == {
        "fuseforks.turn.rounds": 22, "fuseforks.images.count": 21, "fuseforks.cap.removed": 1}
    capped = [s for s in spans if "fuseforks.cap.removed" in s["attributes"]]
    assert [(s["name"], s["attributes"]["gen_ai.tool.call.id"],
             s["attributes"]["fuseforks.cap.removed"], s["attributes"]["fuseforks.cap.kept"])
            for s in capped[1:]] == [("execute_tool rig__frame", "toolu_0001_0", 1, 0)]
    # The request after the cap carries the 20 newest images, the first one no longer.
    last = spans[-1]["attributes"]
    assert last["fuseforks.images.count"] == 20 and removed not in last["fuseforks.images.digests"]
    assert spans[-3]["attributes"]["fuseforks.images.count"] == 20  # round 21: 20, before the cut


def test_drops_carry_their_reasons_and_a_repeat_stop_its_tool() -> None:
    dropped = shape(finished(recorded("dropped-every-reason")))
    tool = dropped[2]["attributes"]
    assert tool["fuseforks.images.dropped"] == len(tool["fuseforks.images.drop_reasons"])
    assert set(tool["fuseforks.images.drop_reasons"]) == {
        "unreadable", "unsupported_format", "too_large", "too_many"}
    assert dropped[0]["attributes"]["fuseforks.images.dropped"] == tool["fuseforks.images.dropped"]
    assert dropped[3]["attributes"]["fuseforks.images.placements"] == ("alternate",) * 4

    repeat = shape(finished(recorded("repeat-stop")))
    assert {k: v for k, v in repeat[0]["attributes"].items() if k.startswith(
        ("fuseforks.repeat", "fuseforks.turn.stop", "gen_ai.provider"))} == {
        "gen_ai.provider.name": "gcp.gemini", "fuseforks.repeat.tool": "rig__still",
        "fuseforks.repeat.count": 3, "fuseforks.repeat.round": 3, "fuseforks.turn.stop": "repeat"}
    summary = repeat[-1]["attributes"]
    assert (summary["fuseforks.request.purpose"], summary["fuseforks.request.summary"]) == (
        "summary", True)


def test_a_turn_interrupted_while_its_tool_ran() -> None:
    turn = "p4-anthropic"
    events = cut_and_continue(
        recorded(turn), 5,
        ("2026-11-30T00:00:00.500Z", TurnInterrupted(round=1, cause="SIGINT", during="tools")),
        ("2026-11-30T00:00:00.501Z", TurnEnded(rounds=1, stop="interrupted")))
    root, chat, tool = shape(finished(events))
    assert (root["start"], root["end"], root["status"]) == (ms(0), ms(501), ("UNSET", None))
    assert {k: v for k, v in root["attributes"].items() if k.startswith(
        ("fuseforks.interrupt", "fuseforks.turn.stop", "fuseforks.turn.rounds"))} == {
        "fuseforks.interrupt.cause": "SIGINT", "fuseforks.interrupt.during": "tools",
        "fuseforks.interrupt.round": 1, "fuseforks.turn.stop": "interrupted",
        "fuseforks.turn.rounds": 1}
    assert chat["attributes"]["fuseforks.request.outcome"] == "received"
    assert (tool["start"], tool["end"], tool["status"]) == (ms(40), ms(500), ("UNSET", None))
    assert tool["attributes"] == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "nik__live_view_image",
        "gen_ai.tool.call.id": "toolu_0001_0", "gen_ai.tool.type": "function",
        "fuseforks.round": 1, "fuseforks.tool.server": "nik",
        "fuseforks.tool.outcome": "interrupted"}


def test_a_turn_interrupted_while_it_waited_on_the_provider() -> None:
    events = cut_and_continue(
        recorded("p4-anthropic"), 9,
        ("2026-11-30T00:00:02.000Z", TurnInterrupted(round=2, cause="SIGTERM", during="request")),
        ("2026-11-30T00:00:02.000Z", TurnEnded(rounds=2, stop="interrupted")))
    spans = shape(finished(events))
    assert [s["name"] for s in spans] == ["invoke_agent replay", "chat claude-sonnet-5-5",
                                          "execute_tool nik__live_view_image",
                                          "chat claude-sonnet-5-5"]
    waiting = spans[-1]
    assert (waiting["end"], waiting["status"]) == (ms(2000), ("UNSET", None))
    assert waiting["attributes"]["fuseforks.request.outcome"] == "interrupted"
    assert "gen_ai.usage.input_tokens" not in waiting["attributes"]
    assert spans[0]["attributes"]["fuseforks.interrupt.during"] == "request"
    assert spans[0]["attributes"]["gen_ai.usage.input_tokens"] == 101  # the one answer


def test_a_failed_turn_is_an_error_with_the_recorded_error_text() -> None:
    error = "anthropic: HTTP 529 overloaded_error: Overloaded (after 5 attempts)"
    events = cut_and_continue(
        recorded("p4-anthropic"), 3,
        ("2026-11-30T00:00:01.000Z", LlmRetried(round=1, attempt=1, status=529,
                                                error_class="server_error",
                                                code="overloaded_error", delay_ms=1000)),
        ("2026-11-30T00:00:05.000Z", LlmRetryStopped(round=1, attempt=5, status=529,
                                                     error_class="server_error",
                                                     code="overloaded_error")),
        ("2026-11-30T00:00:05.001Z", TurnEnded(rounds=1, stop="error", error=error)))
    root, chat = shape(finished(events))
    assert root["status"] == chat["status"] == ("ERROR", error)
    assert root["attributes"]["error.type"] == chat["attributes"]["error.type"] == \
        "overloaded_error"
    assert root["attributes"]["fuseforks.turn.stop"] == "error"
    assert "gen_ai.usage.input_tokens" not in root["attributes"]
    assert (chat["start"], chat["end"]) == (ms(20), ms(5001))
    assert {k: v for k, v in chat["attributes"].items() if k.startswith("fuseforks.r")} == {
        "fuseforks.round": 1, "fuseforks.request.purpose": "round",
        "fuseforks.request.messages": 1, "fuseforks.retries": 1,
        "fuseforks.request.outcome": "failed"}
    assert chat["events"] == [
        ("fuseforks.llm_retry", ms(1000), {
            "fuseforks.retry.attempt": 1, "fuseforks.retry.error_class": "server_error",
            "fuseforks.retry.delay_ms": 1000, "fuseforks.retry.status": 529,
            "fuseforks.retry.code": "overloaded_error"}),
        ("fuseforks.llm_call_ended", ms(5000), {
            "fuseforks.retry.attempt": 5, "fuseforks.retry.error_class": "server_error",
            "fuseforks.retry.status": 529, "fuseforks.retry.code": "overloaded_error",
            "fuseforks.llm_call.end": "gave_up"}),
    ]


def test_a_record_without_an_end_is_a_cut_trace() -> None:
    events = [e for e in recorded("p4-anthropic") if e.seq <= 9]  # killed while asking again
    root, first, tool, second = shape(finished(events))
    assert root["attributes"]["fuseforks.turn.stop"] == "cut"
    assert "fuseforks.turn.rounds" not in root["attributes"]
    assert root["end"] == second["start"] == second["end"] == ms(80)
    assert second["attributes"]["fuseforks.request.outcome"] == "unanswered"
    assert first["end"] == ms(30) and tool["end"] == ms(60)
    cut_in_tools = shape(finished([e for e in recorded("p4-anthropic") if e.seq <= 5]))
    assert cut_in_tools[-1]["attributes"]["fuseforks.tool.outcome"] == "unanswered"
    assert turn_spans([e for e in recorded("p4-anthropic") if e.seq > 1]) == []


def test_times_are_the_recorded_ones_to_the_nanosecond() -> None:
    assert time_ns("2026-11-30T00:00:00.000Z") == T0
    assert time_ns("2026-11-30T00:00:01.310Z") == T0 + 1_310_000_000
    assert time_ns("2026-11-30T09:00:01.310+09:00") == T0 + 1_310_000_000
    assert time_ns("1970-01-01T00:00:00.000001Z") == 1_000


STREAMS = sorted(p.stem for p in REPLAYS.glob("*.jsonl"))


@pytest.mark.parametrize("name", STREAMS)
def test_no_content_unless_asked_and_never_base64(name: str) -> None:
    events = recorded(name)
    plain = finished(events)
    assert all(not key.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system_",
                                   "gen_ai.tool.definitions", "gen_ai.tool.call.arg",
                                   "gen_ai.tool.call.result"))
               for span in plain for key in (span.attributes or {}))
    texts = [e.event.request for e in events if isinstance(e.event, TurnStarted)]
    texts += [e.event.text for e in events if isinstance(e.event, ResponseReceived) and e.event.text]
    texts += [e.event.body for e in events if isinstance(e.event, ToolResultRecorded)]
    texts += [e.event.answer for e in events if isinstance(e.event, TurnEnded) and e.event.answer]
    signatures = [piece for e in events if isinstance(e.event, ResponseReceived)
                  for call in e.event.tool_calls for piece in call.signature]
    plain_strings = strings(plain)
    for text in texts + signatures:  # (a short body such as "frame" is part of a tool's name)
        assert not any(text == value or (len(text) > 16 and text in value)
                       for value in plain_strings), text
    captured = finished(events, capture_content=True)
    assert [s.name for s in captured] == [s.name for s in plain]
    captured_strings = strings(captured)
    for value in plain_strings + captured_strings:
        assert find_media(value) is None
    for piece in signatures:  # Gemini's opaque signatures are not content either
        assert not any(piece in value for value in captured_strings), piece
    for text in texts:  # and everything that is content is there when asked for
        assert any(text in value or json.dumps(text)[1:-1] in value
                   for value in captured_strings), text


def test_content_when_asked_is_the_conventions_json_messages() -> None:
    turn = "p4-anthropic"
    root, first, tool, second = shape(finished(recorded(turn), capture_content=True))
    assert json.loads(root["attributes"]["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": REQUEST}]}]
    answer = "I see 1 image. image 1: left half red, right half green."
    assert json.loads(root["attributes"]["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": answer}],
         "finish_reason": "answered"}]
    assert "gen_ai.system_instructions" not in root["attributes"]  # the turn had no system prompt
    assert json.loads(first["attributes"]["gen_ai.output.messages"]) == [
        {"role": "assistant", "finish_reason": "tool_use", "parts": [
            {"type": "tool_call", "id": "toolu_0001_0", "name": "nik__live_view_image",
             "arguments": {}}]}]
    assert [t["name"] for t in json.loads(first["attributes"]["gen_ai.tool.definitions"])] == [
        "nik__live_view_image", "nik__camera_status"]
    assert json.loads(second["attributes"]["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": REQUEST}]},
        {"role": "assistant", "parts": [
            {"type": "tool_call", "id": "toolu_0001_0", "name": "nik__live_view_image",
             "arguments": {}}]},
        {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "toolu_0001_0", "response": BODY}]},
    ]
    assert (tool["attributes"]["gen_ai.tool.call.arguments"],
            tool["attributes"]["gen_ai.tool.call.result"]) == ("{}", BODY)
    # Content adds attributes and changes nothing else.
    plain = shape(finished(recorded(turn)))
    for with_content, without in zip((root, first, tool, second), plain, strict=True):
        assert {k: v for k, v in with_content["attributes"].items()
                if not k.startswith("gen_ai.") or k in without["attributes"]} == \
            without["attributes"]


def test_the_content_switch_is_the_conventions_environment_variable() -> None:
    variable = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
    assert capture_content({}) is False
    assert [capture_content({variable: v}) for v in (
        "true", "TRUE", " True ", "span_only", "SPAN_AND_EVENT")] == [True] * 5
    assert [capture_content({variable: v}) for v in (
        "false", "1", "yes", "EVENT_ONLY", "NO_CONTENT", "")] == [False] * 6


def test_the_same_record_gives_the_same_spans_and_another_turn_another_trace() -> None:
    events = recorded("p4-anthropic")
    assert turn_spans(events) == turn_spans(list(events))
    assert shape(finished(events)) == shape(finished(events))
    other = recorded("p4-gemini")
    assert {s.trace_id for s in turn_spans(events)}.isdisjoint(
        {s.trace_id for s in turn_spans(other)})
    assert len({s.span_id for s in turn_spans(recorded("cap-at-20"))}) == 1 + 22 + 21
    assert isinstance(events[2].event, RequestSent) and isinstance(events[4].event, ToolCalled)


def test_a_takeover_is_an_event_of_the_turn_and_ends_the_lost_tool_call() -> None:
    events = cut_and_continue(
        recorded("p4-anthropic"), 5,
        ("2026-11-30T00:00:03.000Z", TurnTakenOver(
            round=1, worker="worker-b", endpoint_host="api.anthropic.com",
            images_lost=[], calls_lost=["toolu_0001_0"])),
        ("2026-11-30T00:00:03.000Z", ToolResultRecorded(
            round=1, call_id="toolu_0001_0", name="nik__live_view_image", ok=False,
            body="(lost)", fault="lost in takeover")),
        ("2026-11-30T00:00:03.001Z", TurnEnded(rounds=1, stop="error", error="gave up")))
    root, _chat, tool = shape(finished(events))
    assert root["events"] == [("fuseforks.turn_taken_over", ms(3000), {
        "fuseforks.round": 1, "fuseforks.takeover.worker": "worker-b",
        "fuseforks.takeover.images_lost": 0, "fuseforks.takeover.calls_lost": 1})]
    assert (tool["end"], tool["status"]) == (ms(3000), ("UNSET", None))
    assert tool["attributes"]["fuseforks.tool.outcome"] == "lost"


def test_a_gateway_session_is_one_session_span_with_a_tool_span_per_call() -> None:
    session = "gateway-claude-desktop"
    events = recorded(session)
    sent = [e.event.images for e in events if isinstance(e.event, ResultSent)]
    root, *calls = shape(finished(events))
    assert root == {
        "name": "gateway_session claude-ai", "trace_id": trace_of(session),
        "span_id": span_of(session, 1), "parent": None, "kind": "INTERNAL",
        "start": ms(0), "end": ms(120), "status": ("UNSET", None),
        "attributes": {
            "gen_ai.operation.name": "gateway_session", "gen_ai.agent.name": "gateway",
            "fuseforks.client.name": "claude-ai", "fuseforks.client.version": "0.14.10",
            "fuseforks.gateway.profile": "claude-desktop", "fuseforks.gateway.transport": "stdio",
            "fuseforks.turn.id": session, "fuseforks.turn.language": "en",
            "fuseforks.session.stop": "closed", "fuseforks.session.calls": 3,
            "fuseforks.images.count": 3,
        },
        "events": [],
    }
    assert [(c["name"], c["span_id"], c["parent"], c["start"], c["end"], c["status"])
            for c in calls] == [
        ("execute_tool shots__both", span_of(session, 2), span_of(session, 1), ms(10), ms(30),
         ("UNSET", None)),
        ("execute_tool shots__small", span_of(session, 6), span_of(session, 1), ms(50), ms(70),
         ("UNSET", None)),
        ("execute_tool shots__nothing", span_of(session, 10), span_of(session, 1), ms(90),
         ms(100), ("ERROR", "unknown tool 'shots__nothing'")),
    ]
    assert [c["attributes"]["fuseforks.images.sent"] for c in calls] == [tuple(s) for s in sent]
    assert [c["attributes"]["fuseforks.tool.outcome"] for c in calls] == ["ok", "ok", "error"]
    cut_root, *cut_calls = shape(finished([e for e in events if e.seq <= 10]))
    assert cut_root["attributes"]["fuseforks.session.stop"] == "cut"
    assert cut_root["end"] == cut_calls[-1]["end"] == ms(90)
    assert cut_calls[-1]["attributes"]["fuseforks.tool.outcome"] == "unanswered"
