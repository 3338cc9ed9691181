"""`fuseforks demo` with the standard OpenTelemetry environment sends every turn to the OTLP/HTTP
endpoint it names — here a receiver on 127.0.0.1 decoding the bodies with the official
`ExportTraceServiceRequest` — and what arrives is what the store's record gives again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from fuseforks.demo.scenarios import DEMO_SCENARIOS
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes
from tests.traces.support import Receiver, attributes, finished, trace_of

PROVIDER_NAMES = {  # gen_ai.provider.name of the demo's wires, spelled out
    "meta-responses": "meta", "anthropic": "anthropic", "gemini": "gcp.gemini",
    "openai-responses": "openai", "openai-compat": "openai", "xai-responses": "x_ai",
    "perplexity-responses": "perplexity", "bedrock-converse": "aws.bedrock",
    "vertex-gemini": "gcp.vertex_ai", "vertex-anthropic": "gcp.vertex_ai",
    "azure-chat": "azure.ai.openai", "azure-responses": "azure.ai.openai", "ollama": "ollama",
    "vllm": "vllm", "llamacpp": "llama.cpp", "lmstudio": "lmstudio",
}
CHILDREN = {  # the spans under each turn's span, in the order they start, per expectation
    "delivered": ["chat", "execute_tool", "chat"],
    "ladder": ["chat", "execute_tool", "chat", "chat"],  # refused in place, resent alternate
    "stripped": ["chat", "execute_tool", "chat", "chat", "chat"],  # ... and resent without
}


def test_the_demo_sends_each_of_its_turns_to_the_otlp_endpoint(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    db = tmp_path / "demo.db"
    with Receiver() as receiver:
        environment |= {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                        "OTEL_SERVICE_NAME": "fuseforks-demo",
                        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
        done = processes.run(
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
    assert [s.name for s in roots] == ["invoke_agent demo"] * len(DEMO_SCENARIOS)
    rows = [attributes(s.attributes) for s in roots]
    assert [(r["gen_ai.operation.name"], r["gen_ai.agent.name"], r["fuseforks.wire"],
             r["gen_ai.provider.name"], r["gen_ai.request.model"], r["fuseforks.turn.stop"])
            for r in rows] == [
        ("invoke_agent", "demo", s.wire, PROVIDER_NAMES[s.wire], s.model, "answered")
        for s in DEMO_SCENARIOS]
    assert [r.get("fuseforks.fallback.outcome") for r in rows] == [
        "ok" if s.expect == "stripped" else None for s in DEMO_SCENARIOS]
    assert [s.trace_id.hex() for s in roots] == [trace_of(r["fuseforks.turn.id"]) for r in rows]
    # What arrived is, span for span, what the record gives again.
    with SqliteStore(db) as store:
        expected = [span for turn in store.turns()
                    for span in encode_spans(finished(store.read(turn.turn_id)))
                    .resource_spans[0].scope_spans[0].spans]
    assert sorted(spans, key=lambda s: s.span_id) == sorted(expected, key=lambda s: s.span_id)
    children = {root.trace_id: sorted(
        (s for s in spans if s.trace_id == root.trace_id and s.parent_span_id),
        key=lambda s: s.start_time_unix_nano) for root in roots}
    turns = {scenario.name: children[root.trace_id]
             for scenario, root in zip(DEMO_SCENARIOS, roots, strict=True)}
    assert {name: [s.name.split()[0] for s in turn] for name, turn in turns.items()} == {
        s.name: CHILDREN[s.expect] for s in DEMO_SCENARIOS}

    def chats(name: str) -> list[tuple[int, dict[str, object]]]:
        return [(s.status.code, attributes(s.attributes)) for s in turns[name]
                if s.name.startswith("chat")]

    # The model that refuses images anywhere: refused in place, refused in a user message,
    # answered without them.
    stripped = chats("image-refusing")
    assert [(code, a["fuseforks.request.purpose"], a["fuseforks.request.outcome"],
             a.get("fuseforks.refusal"), a.get("fuseforks.placement.changed"),
             a.get("fuseforks.placement.learned"), a.get("fuseforks.fallback.outcome"))
            for code, a in stripped] == [
        (0, "round", "received", None, None, None, None),
        (2, "round", "refused", "other", None, "native:refused", None),
        (2, "resend", "refused", "other", "alternate", "alternate:refused", None),
        (0, "resend", "received", None, None, None, "ok"),
    ]
    refused = [s for s in turns["image-refusing"] if s.status.code == 2]  # STATUS_CODE_ERROR
    assert {s.status.message for s in refused} == {"invalid request"}
    # Gemini 2.5: the images refused inside the tool result, then taken in a user message.
    ladder = chats("gemini-2.5")
    assert [(code, a["gen_ai.request.model"], a["fuseforks.request.purpose"],
             a["fuseforks.request.outcome"], a.get("fuseforks.refusal"),
             a.get("fuseforks.images.placements"), a.get("fuseforks.placement.changed"),
             a.get("fuseforks.placement.learned"))
            for code, a in ladder] == [
        (0, "gemini-2.5-flash", "round", "received", None, None, None, None),
        (2, "gemini-2.5-flash", "round", "refused", "placement", ("native",), None,
         "native:refused"),
        (0, "gemini-2.5-flash", "resend", "received", None, ("alternate",), "alternate",
         "alternate:received"),
    ]
    assert "fuseforks.fallback.outcome" not in rows[list(turns).index("gemini-2.5")]
