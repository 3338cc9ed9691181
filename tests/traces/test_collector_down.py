"""Exporting never delays a turn. With the collector down — nothing listening on its port, or a
collector that takes the connection and never answers — a turn and its agent take as long as
without traces, `fuseforks run` exits promptly, and one warning line says where the spans did not
go and why; the record keeps every turn, and its trace can be sent again from it. With a
collector that works, every span arrives, those of a short-lived process included."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan

from fuseforks import Agent
from fuseforks.agent import TurnResult
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.traces import otel
from fuseforks.traces.recorded import Sending
from tests.helpers import processes
from tests.helpers.simulator import simulator
from tests.traces.support import Receiver, SilentCollector, finished, refused_port

KEY = "sk-traces-tests"
MARGIN = 0.3
"""Seconds a traced turn may take beyond the same turn untraced: scheduling noise on a loaded
machine, far below what waiting on a collector costs (its timeout, its retries' backoff)."""
PROCESS_MARGIN = 1.0
"""The same for a whole `fuseforks run` process, from its turn's end to its exit: a traced
process also tears down the exporter's thread; still far below the hour the silent collector's
exporter is given."""
CAMERA = {"mcpServers": {"nik": {"command": sys.executable,
                                 "args": ["-m", "fuseforks.demo.camera"]}}}


pytestmark = pytest.mark.usefixtures("no_otel_environment")


@contextmanager
def collector_down(kind: str) -> Iterator[str]:
    """The base URL of a collector that is down: `refused` (nothing listens) or `silent` (it
    takes the connection and never answers)."""
    if kind == "refused":
        yield f"http://127.0.0.1:{refused_port()}"
        return
    with SilentCollector() as silent:
        yield silent.endpoint


async def timed_turn(base_url: str, store: MemoryStore) -> tuple[float, TurnResult]:
    """Seconds from opening an agent to having it closed again, with one turn in between."""
    started = time.monotonic()
    async with Agent(wire="anthropic", model="claude-sonnet-5-5", base_url=base_url,
                     api_key=KEY, db=store, log=None) as agent:
        result = await agent.run("hello")
    return time.monotonic() - started, result


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Every warning logged, by fuseforks or by anyone else (the OpenTelemetry SDK)."""
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("kind", ["refused", "silent"])
async def test_a_collector_that_is_down_does_not_delay_a_turn(
        kind: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    caplog.set_level(logging.WARNING)
    async with run_simulator() as sim:
        url = sim.base_urls["anthropic"]
        plain = min([(await timed_turn(url, store))[0] for _ in range(2)])
        with collector_down(kind) as endpoint:
            monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
            if kind == "silent":  # the exporter's own timeout: what the exit must not wait for
                monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
            turns = [await timed_turn(url, store) for _ in range(3)]
            traced = min(seconds for seconds, _ in turns)
            assert traced <= plain + MARGIN, (plain, [seconds for seconds, _ in turns])
            started = time.monotonic()
            otel.close_live_exports()  # the process's exit
            assert time.monotonic() - started <= otel.EXIT_WAIT + MARGIN
            await anyio.sleep(1.5)  # an export left running at exit ends (1 s) and says nothing
    cause = "connection refused" if kind == "refused" else "no answer within"
    assert len(warnings(caplog)) == 1, warnings(caplog)
    (line,) = warnings(caplog)
    assert line.startswith(f"fuseforks.traces: traces: the collector at {endpoint}/v1/traces "
                           f"did not take the spans ({cause}"), line
    assert line.endswith("the turns are on record: `fuseforks replay --otlp` sends them"), line
    # Nothing is lost from the record: each turn's trace, sent from it now, arrives whole.
    with Receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        sending = Sending()
        try:
            sent = list(sending.send([store.read(result.turn_id) for _, result in turns]))
        finally:
            sending.close()
    assert [s.accepted for s in sent] == [True] * 3
    assert sorted(received(receiver)) == sorted(
        span for _, result in turns for span in encoded(finished(result.events)))


def encoded(spans: Sequence[ReadableSpan]) -> list[bytes]:
    """Each span as the OTLP protobuf message a collector receives, serialized."""
    return [s.SerializeToString(deterministic=True)
            for r in encode_spans(spans).resource_spans for sc in r.scope_spans for s in sc.spans]


def received(receiver: Receiver) -> list[bytes]:
    """Each span the receiver took, serialized the same way."""
    return [s.SerializeToString(deterministic=True) for s in receiver.spans()]


async def test_a_working_collector_gets_every_span_of_every_agent(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Agents of one process share its export: closing one waits for nothing, and the process's
    exit sends what is left."""
    store = MemoryStore()
    caplog.set_level(logging.WARNING)
    with Receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        async with run_simulator(script=Script(call_tools=("nik__live_view_image",))) as sim:
            results = []
            for wire, model in (("anthropic", "claude-sonnet-5-5"), ("openai-responses", "gpt-5.5"),
                                ("anthropic", "claude-sonnet-5-5")):
                async with Agent(wire=wire, model=model, base_url=sim.base_urls[wire],
                                 api_key=KEY, mcp=CAMERA, db=store, log=None) as agent:
                    results.append(await agent.run("Take a picture."))
        export = otel.live_export()
        otel.close_live_exports()
    assert warnings(caplog) == []
    expected = [span for result in results for span in finished(store.read(result.turn_id))]
    assert len(expected) == 3 * 4  # per turn: the turn, two model calls, one tool call
    assert sorted(received(receiver)) == sorted(encoded(expected))
    assert (export.ended, export.sent, export.dropped, export.lost) == (12, 12, 0, 0)


async def test_spans_beyond_the_queue_are_dropped_and_counted(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A queue of two spans and a collector that never answers: the first turn's two spans are
    in the export that waits, the next turns' push the oldest out of the queue. Every span is
    counted as not sent, and the overflow is the one warning."""
    caplog.set_level(logging.WARNING)
    with SilentCollector() as silent:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", silent.endpoint)
        monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "2")
        async with run_simulator() as sim, Agent(
                wire="anthropic", model="claude-sonnet-5-5", base_url=sim.base_urls["anthropic"],
                api_key=KEY, db=MemoryStore(), log=None) as agent:
            for _ in range(3):
                await agent.run("hello")  # two spans each: the turn and its model call
        export = otel.live_export()
        started = time.monotonic()
        otel.close_live_exports()
        assert time.monotonic() - started <= export.exit_wait + MARGIN
    assert (export.ended, export.sent, export.lost) == (6, 0, 6)
    (line,) = warnings(caplog)
    assert line.startswith(f"fuseforks.traces: traces: the collector at {silent.endpoint}/v1/"
                           "traces did not take the spans (more than the 2 spans the queue "
                           "holds were waiting); spans beyond the queue are dropped; "), line


RUN = [sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model",
       "claude-sonnet-5-5", "--no-stream"]


class Run:
    """One `fuseforks run` process: how long it took from the end of its turn (its log line
    `turn: …`, written when the turn ends) to its exit, and what it said."""

    def __init__(self, url: str, tmp_path: Path, name: str,
                 otel_environment: dict[str, str]) -> None:
        environment = {k: v for k, v in os.environ.items()
                       if not k.startswith("OTEL_") and not k.endswith("_API_KEY")}
        process = processes.spawn(
            [*RUN, "--base-url", f"{url}/anthropic", "--db", str(tmp_path / f"{name}.db"),
             "--log", str(tmp_path / f"{name}.log"), "hello"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=environment | {"ANTHROPIC_API_KEY": KEY, "PYTHONUNBUFFERED": "1"}
            | otel_environment)
        assert process.stdout is not None and process.stderr is not None
        turn_ended = None
        for line in process.stdout:
            if line.startswith("turn: ") and turn_ended is None:
                turn_ended = time.monotonic()
        self.returncode = process.wait(timeout=300)
        exited = time.monotonic()
        self.stderr = process.stderr.read()
        process.stdout.close()
        process.stderr.close()
        assert turn_ended is not None, self.stderr
        self.after_turn = exited - turn_ended


def notes(stderr: str) -> list[str]:
    """What a run says on stderr beyond its progress lines."""
    return [line for line in stderr.splitlines() if not line.startswith("… ")]


def test_fuseforks_run_exits_promptly_when_the_collector_is_down(tmp_path: Path) -> None:
    """Nothing listening: the exit does not wait at all. A collector that never answers, with an
    exporter timeout of an hour: the exit waits for it at most `EXIT_WAIT`. One line each."""
    refused = f"http://127.0.0.1:{refused_port()}"
    with simulator() as url, SilentCollector() as silent:
        environments = {
            "plain": {},
            "refused": {"OTEL_EXPORTER_OTLP_ENDPOINT": refused},
            "silent": {"OTEL_EXPORTER_OTLP_ENDPOINT": silent.endpoint,
                       "OTEL_EXPORTER_OTLP_TIMEOUT": "3600"},
        }
        runs: dict[str, list[Run]] = {kind: [] for kind in environments}
        for attempt in range(3):
            for kind, environment in environments.items():
                runs[kind].append(Run(url, tmp_path, f"{kind}{attempt}", environment))
    for kind, made in runs.items():
        for run in made:
            assert run.returncode == 0, (kind, run.stderr)
    seconds = {kind: min(run.after_turn for run in made) for kind, made in runs.items()}
    assert seconds["refused"] <= seconds["plain"] + PROCESS_MARGIN, seconds
    assert seconds["silent"] <= seconds["plain"] + otel.EXIT_WAIT + PROCESS_MARGIN, seconds
    for run in runs["plain"]:
        assert notes(run.stderr) == [], run.stderr
    for kind, endpoint, cause in (("refused", refused, "connection refused"),
                                  ("silent", silent.endpoint, "no answer within")):
        for run in runs[kind]:
            (line,) = notes(run.stderr)
            assert line.startswith(f"traces: the collector at {endpoint}/v1/traces did not take "
                                   f"the spans ({cause}"), run.stderr


def test_a_short_lived_run_sends_every_span(tmp_path: Path) -> None:
    """`fuseforks run` ends right after its turn: its spans are sent at exit, every one."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(CAMERA), encoding="utf-8")
    with simulator() as url, Receiver() as receiver:
        environment = {k: v for k, v in os.environ.items()
                       if not k.startswith("OTEL_") and not k.endswith("_API_KEY")}
        done = processes.run(
            [sys.executable, "-m", "fuseforks", "run", "--wire", "openai-responses", "--model",
             "gpt-5.5", "--no-stream", "--base-url", f"{url}/openai/v1", "--mcp-config",
             str(config), "--db", str(tmp_path / "t.db"), "--log", str(tmp_path / "t.log"),
             "Take a picture."], capture_output=True, text=True, timeout=300,
            env=environment | {"OPENAI_API_KEY": KEY,
                               "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    assert done.returncode == 0, done.stderr
    assert notes(done.stderr) == [], done.stderr
    with SqliteStore(tmp_path / "t.db") as store:
        (turn,) = store.turns()
        expected = finished(store.read(turn.turn_id))
    assert len(expected) == 4  # the turn, two model calls, one tool call
    assert sorted(received(receiver)) == sorted(encoded(expected))


async def test_a_collector_that_refuses_the_spans_is_named_with_its_answer(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with Receiver(status=401) as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        async with run_simulator() as sim:
            await timed_turn(sim.base_urls["anthropic"], MemoryStore())
        otel.close_live_exports()
    assert warnings(caplog) == [
        f"fuseforks.traces: traces: the collector at {receiver.endpoint}/v1/traces did not take "
        "the spans (HTTP 401 Unauthorized); spans are dropped while it is away; the turns are on "
        "record: `fuseforks replay --otlp` sends them"]
