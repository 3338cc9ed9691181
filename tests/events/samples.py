"""One fully populated instance of every event kind, and a small recorded turn."""

from __future__ import annotations

import hashlib

from fuseforks.events.types import (
    FallbackSettled,
    ImageDelivery,
    ImageDrop,
    ImageMeta,
    ImagesCapped,
    ImagesDropped,
    ImagesNormalized,
    ImagesStripped,
    JpegResent,
    LlmRetried,
    LlmRetryStopped,
    PlacementChanged,
    PlacementLearned,
    RepeatDetected,
    RequestRefused,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ServerDown,
    ToolCalled,
    ToolCallRecord,
    ToolResultRecorded,
    ToolSpecRecord,
    TurnEnded,
    TurnEvent,
    TurnInterrupted,
    TurnNotStarted,
    TurnStarted,
    TurnTakenOver,
    Usage,
)

D1 = hashlib.sha256(b"one").hexdigest()
D2 = hashlib.sha256(b"two").hexdigest()

SAMPLES: list[TurnEvent] = [
    TurnStarted(agent="agent_9", wire="anthropic", model="claude-sonnet-5-5",
                endpoint_host="api.anthropic.com", language="ja", request="撮って",
                system="You are careful.", max_rounds=6, image_cap=20, placement="native",
                summary_instruction="Answer now.",
                servers_down=[ServerDown(server="cam 2", reason="command not found: 'cam2'")],
                tools=[ToolSpecRecord(name="nik__live_view_image", description="one frame",
                                      input_schema='{"type":"object"}')]),
    RoundStarted(round=1),
    RequestSent(round=2, purpose="resend", wire="openai-compat", model="m", endpoint_host="h",
                message_count=5, images=[ImageDelivery(digest=D1, call_id="c1", placement="alternate")]),
    ResponseReceived(round=1, text="hi", stop_reason="tool_use",
                     tool_calls=[ToolCallRecord(call_id="c1", name="t", arguments='{"a":1}')],
                     usage=Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3,
                                 cache_write_tokens=4)),
    LlmRetried(round=1, attempt=1, status=429, error_class="rate_limited", delay_ms=1500),
    LlmRetryStopped(round=1, attempt=1, status=400, error_class="client_error", code="invalid_request"),
    JpegResent(round=1, model="m", converted=2),
    ToolCalled(round=1, call_id="c1", server="nik", name="nik__live_view_image", arguments="{}"),
    ImagesNormalized(round=1, call_id="c1", images=[ImageMeta(
        digest=D1, source_format="PNG", media_type="image/jpeg", path="re_encoded", width=1568,
        height=1045, size=123456, source_size=999999)]),
    ImagesDropped(round=1, call_id="c1", name="t", drops=[
        ImageDrop(index=4, reason="too_many", source_format="JPEG", detail="fifth image")]),
    ToolResultRecorded(round=1, call_id="c1", name="t", ok=False, body="x", image_digests=[D1, D2],
                       attached=False, fault="server exited with code 1"),
    ImagesCapped(round=3, removed=1, kept=20, removed_digests=[D2]),
    RequestRefused(round=2, purpose="summary", status=400, error_type="invalid_request_error",
                    code="invalid_request", message="bad image", images_rejected=True),
    PlacementChanged(round=2, model="m", placement="alternate"),
    PlacementLearned(round=2, wire="anthropic", model="m", endpoint_host="h", placement="native",
                     outcome="refused"),
    ImagesStripped(round=2, model="m", removed=2, digests=[D1, D2]),
    FallbackSettled(round=2, model="m", removed=2, outcome="failed"),
    RepeatDetected(round=4, name="t", count=3),
    TurnInterrupted(round=4, cause="SIGTERM", during="tools"),
    TurnTakenOver(round=2, worker="worker-b", endpoint_host="api.anthropic.com",
                  images_lost=[D1, D2], calls_lost=["c1"]),
    TurnEnded(rounds=4, stop="repeat", answer="done", error=""),
    TurnNotStarted(agent="agent_9", wire="carrier-pigeon", model="m", language="zh",
                   request="拍一张", system="Be brief.", conversation_id="conv-7"),
]
