"""Spans of live turns: `Agent(tracer_provider=...)` over the simulator and the demo camera gives
exactly the spans its record gives again; without a provider or the environment nothing changes,
and importing fuseforks never loads OpenTelemetry's SDK."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from fuseforks import Agent
from fuseforks.agent import AgentSettings
from fuseforks.events.codec import Envelope
from fuseforks.events.types import RequestSent, TurnInterrupted
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.memory import MemoryStore
from fuseforks.traces import SpanSubscriber, live_subscriber
from fuseforks.traces.live import configured
from tests.helpers import processes
from tests.traces.support import InMemory, finished, shape

CAMERA = {"mcpServers": {"nik": {"command": sys.executable,
                                 "args": ["-m", "fuseforks.demo.camera"]}}}
CALL = "nik__live_view_image"
KEY = "sk-traces-tests"
CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


pytestmark = pytest.mark.usefixtures("no_otel_environment")


async def test_a_live_turn_gives_the_spans_its_record_gives() -> None:
    memory, store = InMemory(), MemoryStore()
    async with run_simulator(script=Script(call_tools=(CALL,))) as sim, Agent(
        wire="openai-responses", model="gpt-5.5", base_url=sim.base_urls["openai-responses"],
        api_key=KEY, mcp=CAMERA, db=store, log=None, settings=AgentSettings(name="camera-agent"),
        tracer_provider=memory.provider,
    ) as agent:
        result = await agent.run("Take a picture.")
        second = await agent.run("And another.", conversation=result.conversation_id)
    live = shape(memory.spans)
    assert [(s["name"], s["parent"] is None) for s in live] == [
        ("invoke_agent camera-agent", True), ("chat gpt-5.5", False),
        (f"execute_tool {CALL}", False), ("chat gpt-5.5", False),
    ] * 2
    first_live = [s for s in live if s["trace_id"] == live[0]["trace_id"]]
    assert first_live == shape(finished(store.read(result.turn_id)))
    assert first_live == shape(finished(result.events))
    second_live = [s for s in live if s["trace_id"] != live[0]["trace_id"]]
    assert second_live == shape(finished(store.read(second.turn_id)))
    root = first_live[0]["attributes"]
    assert (root["gen_ai.provider.name"], root["fuseforks.wire"], root["gen_ai.request.model"],
            root["gen_ai.conversation.id"], root["fuseforks.turn.stop"]) == (
        "openai", "openai-responses", "gpt-5.5", result.conversation_id, "answered")
    assert second_live[0]["attributes"]["fuseforks.history.length"] == 1
    assert first_live[2]["attributes"]["fuseforks.images.digests"] == (result.images[0].digest,)
    assert not any(k.startswith("gen_ai.input") for s in live for k in s["attributes"])


async def test_an_interrupted_live_turn_gives_the_spans_its_record_gives() -> None:
    class RequestOnRecord:
        name = "request on record"

        def __init__(self) -> None:
            self.sent = anyio.Event()

        async def handle(self, batch: Sequence[Envelope]) -> None:
            if any(isinstance(e.event, RequestSent) for e in batch):
                self.sent.set()

    memory, store, watch = InMemory(), MemoryStore(), RequestOnRecord()
    outcome = []
    async with run_simulator(script=Script(latency=30.0)) as sim, Agent(
        wire="anthropic", model="claude-sonnet-5-5", base_url=sim.base_urls["anthropic"],
        api_key=KEY, db=store, log=None, tracer_provider=memory.provider, subscribers=[watch],
    ) as agent, anyio.create_task_group() as group:

        async def run() -> None:
            outcome.append(await agent.run("Say something slowly."))

        group.start_soon(run)
        await watch.sent.wait()
        assert agent.interrupt("SIGINT") == 1
    (result,) = outcome
    assert result.stop == "interrupted"
    assert isinstance(result.events[-2].event, TurnInterrupted)
    live = shape(memory.spans)
    assert live == shape(finished(store.read(result.turn_id)))
    root, chat = live
    assert {k: v for k, v in root["attributes"].items() if k.startswith(
        ("fuseforks.interrupt", "fuseforks.turn.stop"))} == {
        "fuseforks.interrupt.cause": "SIGINT", "fuseforks.interrupt.during": "request",
        "fuseforks.interrupt.round": 1, "fuseforks.turn.stop": "interrupted"}
    assert chat["attributes"]["fuseforks.request.outcome"] == "interrupted"
    assert root["end"] >= chat["end"] and root["status"] == chat["status"] == ("UNSET", None)


async def test_content_is_sent_live_only_when_the_switch_is_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def one_turn() -> list[dict[str, Any]]:
        memory = InMemory()
        async with run_simulator() as sim, Agent(
            wire="gemini", model="gemini-3.8-flash", base_url=sim.base_urls["gemini"],
            api_key=KEY, db=MemoryStore(), log=None, settings=AgentSettings(system="Be brief."),
            tracer_provider=memory.provider,
        ) as agent:
            await agent.run("Hello there.")
        return shape(memory.spans)

    def content(spans: list[dict[str, Any]]) -> list[str]:
        return sorted({k for s in spans for k in s["attributes"]
                       if k.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system_"))})

    assert content(await one_turn()) == []
    monkeypatch.setenv(CONTENT, "true")
    spans = await one_turn()
    assert content(spans) == ["gen_ai.input.messages", "gen_ai.output.messages",
                              "gen_ai.system_instructions"]
    assert spans[0]["attributes"]["gen_ai.system_instructions"] == (
        '[{"type":"text","content":"Be brief."}]')
    monkeypatch.setenv(CONTENT, "false")
    memory = InMemory()
    async with run_simulator() as sim, Agent(
        wire="gemini", model="gemini-3.8-flash", base_url=sim.base_urls["gemini"], api_key=KEY,
        db=MemoryStore(), log=None,
        subscribers=[SpanSubscriber(memory.provider, capture_content=True)],
    ) as agent:
        await agent.run("Hello again.")
    assert content(shape(memory.spans)) == ["gen_ai.input.messages", "gen_ai.output.messages"]


def test_traces_follow_the_standard_environment(monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    assert live_subscriber() is None and not configured({})
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert configured(endpoint)
    assert configured({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"})
    assert not configured({**endpoint, "OTEL_SDK_DISABLED": "true"})
    assert not configured({**endpoint, "OTEL_TRACES_EXPORTER": "none"})
    assert configured({**endpoint, "OTEL_TRACES_EXPORTER": "console,otlp"})
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    subscriber = live_subscriber()
    assert subscriber is not None and subscriber.capture_content is False
    again = live_subscriber()  # another agent of the process: the same export
    assert again is not None and again.provider is subscriber.provider
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    with caplog.at_level(logging.WARNING, logger="fuseforks.traces"):
        assert live_subscriber() is None
    assert caplog.messages == [
        "no traces: OTEL_EXPORTER_OTLP_PROTOCOL=grpc: fuseforks sends traces over OTLP/HTTP "
        "with protobuf bodies only; set it to http/protobuf (or leave it unset)"]


PROBE = """
import sys
import fuseforks, fuseforks.traces, fuseforks.traces.spans, fuseforks.traces.conventions
print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
import anyio
import fuseforks.agent
from fuseforks import Agent
from fuseforks.simulator import run_simulator
from fuseforks.stores.memory import MemoryStore

async def main():
    async with run_simulator(any_model=True) as sim, Agent(
            wire="openai-compat", model="m", base_url=sim.base_urls["openai-compat"],
            api_key="sk-probe", db=MemoryStore(), log=None) as agent:
        print((await agent.run("hello")).stop)

anyio.run(main)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("opentelemetry", "google"))
print(sorted(m for m in loaded if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter",
    "opentelemetry.proto", "opentelemetry.semconv", "google"))))
print("fuseforks.traces.otel" in sys.modules)
"""


def test_without_a_provider_or_the_environment_no_opentelemetry_is_loaded() -> None:
    """`import fuseforks.traces` loads no OpenTelemetry at all. The `mcp` SDK that an agent
    imports loads the OpenTelemetry *API* itself (it depends on it), so after an agent's turn the
    check is that none of the `fuseforks[otel]` packages — SDK, exporter, protobuf — was loaded."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = processes.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, env=environment, cwd=Path(__file__).parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "answered", "[]", "False"]
