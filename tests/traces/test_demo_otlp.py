"""`fuseforks demo` with the standard OpenTelemetry environment sends every turn to the OTLP/HTTP
endpoint it names — here a receiver on 127.0.0.1 decoding the bodies with the official
`ExportTraceServiceRequest` — and what arrives is what the store's record gives again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from fuseforks.stores.sqlite import SqliteStore
from tests.traces.support import Receiver, attributes, finished, trace_of

DEMO_TURNS = [  # wire, provider name, model: the eight demo scenarios
    ("meta-responses", "meta", "muse-spark-latest"),
    ("anthropic", "anthropic", "claude-sonnet-5-5"),
    ("gemini", "gcp.gemini", "gemini-3.8-flash"),
    ("openai-responses", "openai", "gpt-6-sol"),
    ("openai-compat", "openai", "gemini-3.5-flash-lite"),
    ("xai-responses", "x_ai", "grok-4.7"),
    ("perplexity-responses", "perplexity", "google/gemini-3.7-flash"),
    ("perplexity-responses", "perplexity", "perplexity/deepseek-v4-pro-0813"),
]


def test_the_demo_sends_its_eight_turns_to_the_otlp_endpoint(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    db = tmp_path / "demo.db"
    with Receiver() as receiver:
        environment |= {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                        "OTEL_SERVICE_NAME": "fuseforks-demo",
                        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
        done = subprocess.run(
            [sys.executable, "-m", "fuseforks", "demo", "--db", str(db),
             "--log", str(tmp_path / "demo.log")],
            cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert {path for path, _ in receiver.seen} == {"/v1/traces"}
    assert {attributes(r.resource.attributes)["service.name"]
            for request in receiver.requests for r in request.resource_spans} == {
        "fuseforks-demo"}
    spans = receiver.spans()
    roots = sorted((s for s in spans if not s.parent_span_id), key=lambda s: s.start_time_unix_nano)
    assert [s.name for s in roots] == ["invoke_agent demo"] * 8
    rows = [attributes(s.attributes) for s in roots]
    assert [(r["gen_ai.operation.name"], r["gen_ai.agent.name"], r["fuseforks.wire"],
             r["gen_ai.provider.name"], r["gen_ai.request.model"], r["fuseforks.turn.stop"])
            for r in rows] == [("invoke_agent", "demo", wire, provider, model, "answered")
                               for wire, provider, model in DEMO_TURNS]
    assert [r.get("fuseforks.fallback.outcome") for r in rows] == [None] * 7 + ["ok"]
    assert [s.trace_id.hex() for s in roots] == [trace_of(r["fuseforks.turn.id"]) for r in rows]
    # What arrived is, span for span, what the record gives again.
    with SqliteStore(db) as store:
        expected = [span for turn in store.turns()
                    for span in encode_spans(finished(store.read(turn.turn_id)))
                    .resource_spans[0].scope_spans[0].spans]
    assert sorted(spans, key=lambda s: s.span_id) == sorted(expected, key=lambda s: s.span_id)
    children = {root.trace_id: [s.name.split()[0] for s in sorted(
        (s for s in spans if s.trace_id == root.trace_id and s.parent_span_id),
        key=lambda s: s.start_time_unix_nano)] for root in roots}
    assert [children[root.trace_id] for root in roots[:7]] == [
        ["chat", "execute_tool", "chat"]] * 7
    refusing = [s for s in spans if s.trace_id == roots[7].trace_id and s.name.startswith("chat")]
    refused = [s for s in refusing if s.status.code == 2]  # STATUS_CODE_ERROR
    assert refused and {s.status.message for s in refused} == {"invalid request"}
    outcomes = sorted(attributes(s.attributes)["fuseforks.request.outcome"] for s in refusing)
    assert outcomes == ["received"] * 2 + ["refused"] * len(refused)  # round 1, and the resend
