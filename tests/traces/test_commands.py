"""Recorded turns as traces from the command line: `fuseforks export --format otlp-json` writes
one OTLP/JSON document per turn, and `fuseforks replay --otlp` sends each turn to an OTLP/HTTP
endpoint (here a small receiver on 127.0.0.1 that decodes the bodies with the official protobuf
messages)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from fuseforks.cli import main
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ToolCalled, ToolResultRecorded, TurnEnded
from fuseforks.stores.jsonl import write_stream
from tests.traces.support import (
    REPLAYS,
    Receiver,
    attributes,
    cut_and_continue,
    finished,
    recorded,
    span_of,
    trace_of,
)

TURNS = ("p4-anthropic", "p4-image-refusing")


@pytest.fixture(autouse=True)
def no_otel_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


@pytest.fixture
def two_turns(tmp_path: Path) -> Path:
    stream = tmp_path / "two.jsonl"
    stream.write_text("".join((REPLAYS / f"{t}.jsonl").read_text() for t in TURNS))
    return stream


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def as_protobuf(line: str) -> ExportTraceServiceRequest:
    """Read an OTLP/JSON line back: its hex ids become protobuf JSON's base64 again."""
    document = json.loads(line)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(document, ExportTraceServiceRequest())


def test_export_writes_one_otlp_json_document_per_turn(two_turns: Path, tmp_path: Path) -> None:
    done = run("export", str(two_turns), "--format", "otlp-json")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    (resource,) = first["resourceSpans"]
    assert {"key": "service.name", "value": {"stringValue": "fuseforks"}} in \
        resource["resource"]["attributes"]
    (scope,) = resource["scopeSpans"]
    assert scope["scope"]["name"] == "fuseforks"
    root = next(s for s in scope["spans"] if "parentSpanId" not in s)
    assert (root["traceId"], root["spanId"], root["name"], root["kind"]) == (
        trace_of("p4-anthropic"), span_of("p4-anthropic", 1), "invoke_agent replay", 1)
    assert (root["startTimeUnixNano"], root["endTimeUnixNano"]) == (
        "1795996800000000000", "1795996800110000000")
    assert {"key": "gen_ai.provider.name", "value": {"stringValue": "anthropic"}} in \
        root["attributes"]
    chats = [s for s in scope["spans"] if s["name"].startswith("chat ")]
    assert [(c["kind"], c["parentSpanId"]) for c in chats] == [(3, span_of("p4-anthropic", 1))] * 2
    refused = sorted((s for s in json.loads(lines[1])["resourceSpans"][0]["scopeSpans"][0]["spans"]
                      if s.get("status", {}).get("code") == 2),
                     key=lambda s: int(s["startTimeUnixNano"]))  # in place, then in a user message
    assert [s["status"] for s in refused] == [{"code": 2, "message": "invalid request"}] * 2
    assert [[a for a in s["attributes"] if a["key"].startswith("fuseforks.placement.")]
            for s in refused] == [
        [{"key": "fuseforks.placement.learned", "value": {"stringValue": "native:refused"}}],
        [{"key": "fuseforks.placement.changed", "value": {"stringValue": "alternate"}},
         {"key": "fuseforks.placement.learned", "value": {"stringValue": "alternate:refused"}}],
    ]
    assert all({"key": "fuseforks.refusal", "value": {"stringValue": "other"}} in s["attributes"]
               for s in refused)
    # Each line is the protobuf message the SDK's OTLP encoder makes of the same turn.
    for line, turn in zip(lines, TURNS, strict=True):
        expected = encode_spans(finished(recorded(turn)))
        got = as_protobuf(line)
        assert list(got.resource_spans[0].scope_spans[0].spans) == list(
            expected.resource_spans[0].scope_spans[0].spans)

    output = tmp_path / "traces.jsonl"
    done = run("export", str(two_turns), "--format", "otlp-json", "-o", str(output))
    assert done.exit_code == 0, done.output
    assert output.read_text().splitlines() == lines
    assert done.stderr == f"exported 2 turn(s) as OTLP/JSON (10 spans) to {output}\n"
    jsonl = run("export", str(two_turns), "--format", "jsonl")
    assert jsonl.exit_code == 0 and jsonl.stdout == run("export", str(two_turns)).stdout
    assert jsonl.stdout.count('"kind":"TurnStarted"') == 2  # the default: events, as before


def test_export_follows_the_service_name_and_the_content_switch(
        two_turns: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "camera-agents")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    done = run("export", str(two_turns), "--turn", "p4-anthropic", "--format", "otlp-json")
    assert done.exit_code == 0, done.output
    (line,) = done.stdout.splitlines()
    request = as_protobuf(line)
    assert attributes(request.resource_spans[0].resource.attributes)["service.name"] == \
        "camera-agents"
    tool = next(s for s in request.resource_spans[0].scope_spans[0].spans
                if s.name.startswith("execute_tool"))
    assert attributes(tool.attributes)["gen_ai.tool.call.result"] == \
        '{"height":424,"jpeg_bytes":5108,"seq":1,"width":640}'


def test_replay_otlp_sends_each_turn_to_the_endpoint(two_turns: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with Receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        done = run("replay", str(two_turns), "--otlp")
    assert done.exit_code == 0, done.output
    endpoint = f"{receiver.endpoint}/v1/traces"
    assert done.stdout.splitlines() == [
        f"sent p4-anthropic: 4 spans, trace {trace_of('p4-anthropic')}, to {endpoint}",
        f"sent p4-image-refusing: 6 spans, trace {trace_of('p4-image-refusing')}, to {endpoint}",
    ]
    assert receiver.seen == [("/v1/traces", "application/x-protobuf")] * 2
    first, second = receiver.requests
    for request, turn in ((first, "p4-anthropic"), (second, "p4-image-refusing")):
        expected = encode_spans(finished(recorded(turn)))
        assert list(request.resource_spans[0].scope_spans[0].spans) == list(
            expected.resource_spans[0].scope_spans[0].spans)
        assert attributes(request.resource_spans[0].resource.attributes)["service.name"] == \
            "fuseforks"


def test_replay_otlp_says_which_turns_the_endpoint_refused(
        two_turns: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Receiver(status=400) as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint + "/")
        done = run("replay", str(two_turns), "--otlp", "--turn", "p4-image")
    assert done.exit_code == 1
    assert done.stdout.splitlines() == [
        f"not sent p4-image-refusing: {receiver.endpoint}/v1/traces did not accept its 6 spans"]
    assert done.stderr.splitlines()[-1] == "Error: 1 of 1 turns not sent: p4-image-refusing"


def test_replay_otlp_takes_neither_verify_nor_json_nor_another_protocol(
        two_turns: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = run("replay", str(two_turns), "--otlp", "--verify")
    assert done.exit_code == 2
    assert "--otlp sends the turns' spans; it takes no --verify or --json" in done.stderr
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    done = run("replay", str(two_turns), "--otlp")
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: OTEL_EXPORTER_OTLP_PROTOCOL=grpc: fuseforks sends traces over OTLP/HTTP with "
        "protobuf bodies only; set it to http/protobuf (or leave it unset)\n")


def failed_turn() -> list[Envelope]:
    """p4-anthropic whose tool call failed (the server closed the connection) and whose turn
    then ended with an error."""
    turn = [msgspec.structs.replace(e, turn_id="p4-failed") for e in recorded("p4-anthropic")]
    called = turn[4].event
    assert isinstance(called, ToolCalled)
    return cut_and_continue(
        turn, 5,
        ("2026-11-30T00:00:00.060Z", ToolResultRecorded(
            round=1, call_id=called.call_id, name=called.name, ok=False,
            body="Tool returned an error: server 'cam' closed the connection during the call",
            fault="server 'cam' closed the connection during the call")),
        ("2026-11-30T00:00:00.070Z", TurnEnded(rounds=1, stop="error",
                                               error="the provider could not be reached")))


def test_export_otlp_writes_protobuf_a_receiver_takes(two_turns: Path, tmp_path: Path) -> None:
    failed = tmp_path / "failed.jsonl"
    write_stream(failed_turn(), failed.open("wb"))
    stream = tmp_path / "three.jsonl"
    stream.write_bytes(two_turns.read_bytes() + failed.read_bytes())
    out = tmp_path / "traces.pb"
    done = run("export", str(stream), "--format", "otlp", "-o", str(out))
    assert done.exit_code == 0, done.output
    body = out.read_bytes()
    with Receiver() as receiver:
        answer = httpx.post(f"{receiver.endpoint}/v1/traces", content=body,
                            headers={"Content-Type": "application/x-protobuf"})
    assert answer.status_code == 200
    assert receiver.seen == [("/v1/traces", "application/x-protobuf")]
    (request,) = receiver.requests
    expected = [span for turn in (recorded(TURNS[0]), recorded(TURNS[1]), failed_turn())
                for span in encode_spans(finished(turn)).resource_spans[0].scope_spans[0].spans]
    def ordered(spans: Any) -> list[Any]:
        return sorted(spans, key=lambda span: (span.trace_id, span.span_id))

    assert ordered(request.resource_spans[0].scope_spans[0].spans) == ordered(expected)
    assert done.stderr.splitlines() == [
        f"exported 3 turn(s) as OTLP protobuf ({len(expected)} spans, {len(body):,} bytes) "
        f"to {out}"]

    spans = {(span.trace_id.hex(), span.name): span for span in receiver.spans()}
    failed_trace = trace_of("p4-failed")
    tool = next(s for (t, name), s in spans.items() if t == failed_trace
                and name.startswith("execute_tool") and s.status.code == Status.STATUS_CODE_ERROR)
    assert (tool.status.message, attributes(tool.attributes)["error.type"]) == (
        "server 'cam' closed the connection during the call", "tool_error")
    root = next(s for (t, name), s in spans.items() if t == failed_trace
                and name.startswith("invoke_agent") and s.status.code == Status.STATUS_CODE_ERROR)
    assert (root.status.message, attributes(root.attributes)["error.type"]) == (
        "the provider could not be reached", "_OTHER")
