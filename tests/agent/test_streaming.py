"""Streaming over real sockets: the simulator streams, the demo camera runs over stdio, and a
turn with a tool round and an image streams on all seven wires — its text arriving in pieces
while the turn runs — and records exactly what the same turn records without streaming."""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import pytest

from fuseforks import Agent, RecordingFailed, TextDelta, TurnResult
from fuseforks.agent import AgentSettings
from fuseforks.core.canonical import ChatRequest, Usage
from fuseforks.engine.replay import ReplayModel, verify
from fuseforks.events.types import (
    LlmRetried,
    ResponseReceived,
    ToolResultRecorded,
    TurnInterrupted,
    TurnStarted,
)
from fuseforks.images.vault import ImageVault
from fuseforks.projections.log import turn_log
from fuseforks.simulator import Fault, Simulator, run_simulator
from fuseforks.simulator.brain import Script
from fuseforks.stores.memory import MemoryStore
from fuseforks.wires import WIRES
from fuseforks.wires.http import RetryPolicy

CAMERA = {"mcpServers": {"nik": {"command": sys.executable,
                                 "args": ["-m", "fuseforks.demo.camera"]}}}
CALL = "nik__live_view_image"
KEY = "sk-stream-tests"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)
REQUEST = "Take one live view and describe it."
CONVERSATION = "conv-streaming"


class Run(msgspec.Struct):
    result: TurnResult
    deltas: list[TextDelta]
    ended_at_first_answer_delta: bool | None
    bodies: list[tuple[str, dict[str, Any]]]


async def one_turn(wire: str, *, stream: bool, cut: bool = False) -> Run:
    """One turn on `wire` in a fresh simulator and a fresh camera (the same frame every time),
    streamed through `Agent.stream` or run whole; `cut` cuts the answer's stream once."""
    deltas: list[TextDelta] = []
    ended: bool | None = None
    running: list[Simulator] = []

    def progress(text: str) -> None:
        if cut and text.startswith("calling tool"):
            running[0].inject(Fault.cut(wire=wire))  # the next request: the one that answers

    async with run_simulator(script=Script(call_tools=(CALL,)), any_model=True) as simulator, Agent(
        wire=wire, model="sim-vision-1", base_url=simulator.base_urls[wire], api_key=KEY,
        mcp=CAMERA, db=MemoryStore(), log=None, settings=AgentSettings(retry=FAST), on_progress=progress,
    ) as agent:
        running.append(simulator)
        if not stream:
            result = await agent.run(REQUEST, conversation=CONVERSATION)
        else:
            async with agent.stream(REQUEST, conversation=CONVERSATION) as turn:
                async for delta in turn:
                    if ended is None and delta.round == 2:
                        try:
                            turn.result  # noqa: B018 — not there yet while the answer arrives
                            ended = True
                        except RuntimeError:
                            ended = False
                    deltas.append(delta)
            result = turn.result
        bodies = [(r.path, msgspec.json.decode(r.body)) for r in simulator.received]
    return Run(result=result, deltas=deltas, ended_at_first_answer_delta=ended, bodies=bodies)


# The wires whose stream is another method at another path: (the whole one's, the streamed one's).
STREAMED_AT = {
    "gemini": (":generateContent", ":streamGenerateContent"),
    "vertex-gemini": (":generateContent", ":streamGenerateContent"),
    "vertex-anthropic": (":rawPredict", ":streamRawPredict"),
    "bedrock-converse": ("/converse", "/converse-stream"),
}

CHAT_COMPLETIONS = ("openai-compat", "azure-chat", "ollama", "vllm", "llamacpp", "lmstudio")


def facts(result: TurnResult) -> list[tuple[int, int, Any]]:
    """The record less what differs between any two runs: the times and the turn id."""
    return [(e.seq, e.version, e.event) for e in result.events]


@pytest.mark.parametrize("wire", WIRES)
async def test_a_streamed_turn_records_what_a_whole_turn_records(wire: str) -> None:
    whole = await one_turn(wire, stream=False)
    streamed = await one_turn(wire, stream=True)

    assert whole.result.turn_id != streamed.result.turn_id
    assert facts(streamed.result) == facts(whole.result)  # deltas are progress, not facts
    result = streamed.result
    assert result.stop == "answered" and result.rounds == 2
    assert result.answer.startswith("I see 1 image. image 1: left half ")
    assert [i.format for i in result.images] == ["JPEG"] and result.images[0].received
    assert any(isinstance(e.event, ToolResultRecorded) and e.event.attached
               for e in result.events)

    # The answer came in pieces, while the turn was still running.
    answer = [d for d in streamed.deltas if d.round == 2]
    assert len(answer) >= 3
    assert "".join(d.text for d in answer) == result.answer
    assert {(d.purpose, d.attempt) for d in answer} == {("round", 1)}
    assert streamed.ended_at_first_answer_delta is False
    assert "".join(d.text for d in streamed.deltas if d.round == 1) == next(
        e.event.text for e in result.events
        if isinstance(e.event, ResponseReceived) and e.event.round == 1)

    # What went over the wire: streams asked for, and only then.
    assert len(streamed.bodies) == len(whole.bodies) == 2
    for (path, body), (whole_path, whole_body) in zip(streamed.bodies, whole.bodies, strict=True):
        if wire in STREAMED_AT:
            whole_end, streamed_end = STREAMED_AT[wire]
            assert whole_path.endswith(whole_end)
            assert path == whole_path.removesuffix(whole_end) + streamed_end
        else:
            assert path == whole_path
        if wire in ("gemini", "vertex-gemini", "bedrock-converse"):  # the method says it
            assert body == whole_body
        else:
            assert body.pop("stream") is True and "stream" not in whole_body
            if wire in CHAT_COMPLETIONS:
                assert body.pop("stream_options") == {"include_usage": True}
            assert body == whole_body


@pytest.mark.parametrize("wire", WIRES)
async def test_a_cut_stream_is_retried_recorded_and_then_answered(wire: str) -> None:
    cut = await one_turn(wire, stream=True, cut=True)
    result = cut.result
    assert result.stop == "answered" and not result.error
    assert result.answer.startswith("I see 1 image. image 1: left half ")
    retried = [e.event for e in result.events if isinstance(e.event, LlmRetried)]
    assert [(r.round, r.attempt, r.status, r.error_class, r.code) for r in retried] == [
        (2, 1, None, "stream_cut", "")]
    kinds = [type(e.event).__name__ for e in result.events]
    assert kinds[kinds.index("LlmRetried") - 1:kinds.index("LlmRetried") + 2] == [
        "RequestSent", "LlmRetried", "ResponseReceived"]
    assert "llm retry: agent=agent round=2 attempt=1 status=- class=stream_cut" in "\n".join(
        turn_log(result.events))
    # The listener heard part of the answer, then the whole answer again as attempt 2.
    answer = [d for d in cut.deltas if d.round == 2]
    first = "".join(d.text for d in answer if d.attempt == 1)
    again = "".join(d.text for d in answer if d.attempt == 2)
    assert first and result.answer.startswith(first) and first != result.answer
    assert again == result.answer
    assert [d.attempt for d in answer] == sorted(d.attempt for d in answer)
    # Apart from the retry, the record is the uncut one (the simulator counts the cut request
    # in the answer's prompt tokens); and it verifies.
    whole = await one_turn(wire, stream=False)

    def tokens_apart(event: Any) -> Any:
        return (msgspec.structs.replace(event, usage=Usage())
                if isinstance(event, ResponseReceived) else event)

    assert [tokens_apart(e.event) for e in result.events if not isinstance(e.event, LlmRetried)] \
        == [tokens_apart(e.event) for e in whole.result.events]
    verification = await verify(result.events)
    assert verification.divergence is None and verification.produced == verification.recorded


async def test_a_streamed_turn_verifies_and_a_replayed_listener_hears_the_recorded_text() -> None:
    streamed = await one_turn("anthropic", stream=True)
    verification = await verify(streamed.result.events)
    assert verification.divergence is None
    assert verification.produced == verification.recorded
    events = [e.event for e in streamed.result.events]
    started = events[0]
    assert isinstance(started, TurnStarted)
    model, heard = ReplayModel(started, events), []
    for _ in range(2):
        await model.chat(ChatRequest(model="m", messages=[]), ImageVault(), Notes(),
                         on_text=lambda text, attempt: heard.append((text, attempt)))
    answers = [e.text for e in events if isinstance(e, ResponseReceived) and e.text]
    assert heard == [(text, 1) for text in answers]
    assert answers[-1] == streamed.result.answer


class Notes:
    def retried(self, notice: object) -> None: ...

    def stopped(self, stop: object) -> None: ...

    def jpeg_resend(self, notice: object) -> None: ...


async def test_run_with_a_callback_streams_every_call_of_the_turn() -> None:
    heard: list[TextDelta] = []
    async with run_simulator() as simulator, Agent(
        wire="gemini", model="gemini-3.8-flash", base_url=simulator.base_urls["gemini"],
        api_key=KEY, db=MemoryStore(), log=None,
    ) as agent:
        result = await agent.conversation().run("What is an MCP server?", on_text=heard.append)
    assert len(heard) >= 2
    assert {(d.round, d.purpose, d.attempt) for d in heard} == {(1, "round", 1)}
    assert "".join(d.text for d in heard) == result.answer
    assert [r.path for r in simulator.received] == [
        "/gemini/v1beta/models/gemini-3.8-flash:streamGenerateContent"]


async def test_leaving_the_stream_early_waits_for_the_turn_to_end() -> None:
    async with run_simulator(any_model=True) as simulator, Agent(
        wire="openai-compat", model="m", base_url=simulator.base_urls["openai-compat"],
        api_key=KEY, db=MemoryStore(), log=None,
    ) as agent:
        async with agent.stream("What is an MCP server?") as turn:
            async for delta in turn:
                first = delta
                break
        result = turn.result
    assert result.stop == "answered" and result.answer.startswith(first.text)


async def test_an_exception_in_the_block_interrupts_the_turn_and_is_raised_as_itself() -> None:
    store = MemoryStore()

    class Enough(Exception):
        pass

    async with run_simulator(any_model=True) as simulator, Agent(
        wire="anthropic", model="m", base_url=simulator.base_urls["anthropic"], api_key=KEY,
        db=store, log=None,
    ) as agent:
        with pytest.raises(Enough):
            async with agent.stream("What is an MCP server?") as turn:
                async for _ in turn:
                    raise Enough
        with pytest.raises(RuntimeError, match="has not ended"):
            turn.result  # noqa: B018
    [info] = store.turns()
    events = [e.event for e in store.read(info.turn_id)]
    assert [type(e).__name__ for e in events[-2:]] == ["TurnInterrupted", "TurnEnded"]
    interrupted = events[-2]
    assert isinstance(interrupted, TurnInterrupted)
    assert (interrupted.cause, interrupted.during) == ("cancelled", "request")


async def test_a_turn_that_cannot_be_recorded_raises_from_the_stream() -> None:
    class BrokenStore(MemoryStore):
        def append(self, envelopes: Any) -> None:
            raise OSError("disk full")

    async with run_simulator(any_model=True) as simulator, Agent(
        wire="anthropic", model="m", base_url=simulator.base_urls["anthropic"], api_key=KEY,
        db=BrokenStore(), log=None,
    ) as agent:
        with pytest.raises(RecordingFailed, match="disk full"):
            async with agent.stream("hello") as turn:
                async for _ in turn:
                    pass
        assert not simulator.received
