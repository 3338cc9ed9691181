"""A gateway session recorded like a turn: write-ahead, the result cap decided from the record,
cancellation and the session's end, and replay that re-drives the session to the same events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import msgspec
import pytest

from fuseforks.core.media import ENGINE_LIMITS, ImageLimits, ResultLimits, base64_size
from fuseforks.core.names import Language, McpMethod
from fuseforks.engine.replay import verify
from fuseforks.engine.session import CANCELLED, ProgressListener, Session, SessionSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock
from fuseforks.events.types import (
    ImagesCapped,
    ResultSent,
    SessionEnded,
    SessionStarted,
    ToolResultRecorded,
    ToolSpecRecord,
)
from fuseforks.images.normalize import normalize_result_images
from fuseforks.ports.tools import ToolOutput
from tests.helpers import imagegen as gen

SPEC = SessionSpec(agent="gateway", client="claude-code", client_version="2.1.0",
                   transport="stdio", profile="generic", limits=ImageLimits(),
                   result_limits=ResultLimits(), language="en")


def photos(count: int) -> ToolOutput:
    images = normalize_result_images([gen.jpeg(64, 48, seed=s) for s in range(count)],
                                     ENGINE_LIMITS).kept
    return ToolOutput(text="two frames", images=images, bytes_without_images=300)


class Tools:
    """Outputs by tool name; a call to `wait` blocks until released (or cancelled)."""

    def __init__(self, outputs: dict[str, ToolOutput]) -> None:
        self.outputs = outputs
        self.started: list[str] = []
        self.release = anyio.Event()
        self.reached = anyio.Event()

    def tool_specs(self) -> list[ToolSpecRecord]:
        return [ToolSpecRecord(name=name) for name in self.outputs]

    def server_of(self, name: str, method: McpMethod = "tools/call") -> str:
        return name.split("__")[0]

    async def call(self, name: str, arguments: dict[str, Any], language: Language,
                   on_progress: ProgressListener | None = None,
                   method: McpMethod = "tools/call") -> ToolOutput:
        self.started.append(name)
        if arguments.get("wait"):
            self.reached.set()
            await self.release.wait()
        return self.outputs[name]


class Published:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def __call__(self, batch: Sequence[Envelope]) -> None:
        self.batches.append([e.kind for e in batch])


def session(tools: Tools, published: Published, spec: SessionSpec = SPEC) -> Session:
    return Session(spec, tools, session_id="session-1", clock=FixedClock(), publish=published)


async def test_each_call_is_on_record_before_it_starts_and_its_result_before_it_is_returned() \
        -> None:
    published = Published()
    tools = Tools({"cam__frame": photos(2)})
    live = session(tools, published)
    await live.start()

    original = tools.call

    async def checking(*args: Any, **kwargs: Any) -> ToolOutput:
        assert published.batches[-1] == ["ToolCalled"]
        return await original(*args, **kwargs)

    tools.call = checking  # type: ignore[method-assign]
    result = await live.call("c1", "cam__frame", {"n": 1})
    await live.end("closed")
    assert published.batches == [
        ["SessionStarted"], ["ToolCalled"],
        ["ImagesNormalized", "ToolResultRecorded", "ResultSent"], ["SessionEnded"]]
    assert (result.keep, result.notes) == (2, [])
    started, called, _, recorded, sent, ended = [e.event for e in live.history]
    assert isinstance(started, SessionStarted)
    assert (started.client, started.client_version, started.profile) == (
        "claude-code", "2.1.0", "generic")
    assert (called.round, called.server, called.arguments) == (1, "cam", '{"n":1}')
    assert isinstance(recorded, ToolResultRecorded) and recorded.bytes_without_images == 300
    assert sent == ResultSent(round=1, call_id="c1", name="cam__frame", server="cam",
                              client="claude-code", client_version="2.1.0",
                              images=[i.digest for i in photos(2).images])
    assert ended == SessionEnded(calls=1, cause="closed")


async def test_a_result_over_the_clients_limit_keeps_its_first_images_and_says_so() -> None:
    output = photos(3)
    sizes = [base64_size(i.size) for i in output.images]
    # Room for the size without images, the note's reserve, and two of the three images.
    limit = 300 + 512 + sizes[0] + sizes[1]
    spec = msgspec.structs.replace(SPEC, result_limits=ResultLimits(max_bytes=limit))
    published = Published()
    live = session(Tools({"cam__frame": output}), published, spec)
    await live.start()
    result = await live.call("c1", "cam__frame", {})
    capped = next(e.event for e in live.history if isinstance(e.event, ImagesCapped))
    assert (capped.removed, capped.kept, capped.removed_digests) == (
        1, 2, [output.images[2].digest])
    sent = live.history[-1].event
    assert isinstance(sent, ResultSent) and sent.images == [i.digest for i in output.images[:2]]
    assert result.keep == 2
    assert result.notes == ["(the last image was not sent: with it the tool result would be "
                            "larger than this client accepts)"]


async def test_a_token_limit_counts_four_characters_a_token() -> None:
    output = photos(1)
    tokens = (300 + base64_size(output.images[0].size)) // 4
    spec = msgspec.structs.replace(SPEC, result_limits=ResultLimits(max_tokens=tokens + 1))
    fits = session(Tools({"t": output}), Published(), spec)
    await fits.start()
    assert (await fits.call("c1", "t", {})).keep == 1
    spec = msgspec.structs.replace(SPEC, result_limits=ResultLimits(max_tokens=tokens - 1))
    over = session(Tools({"t": output}), Published(), spec)
    await over.start()
    assert (await over.call("c1", "t", {})).keep == 0


async def test_a_cancelled_call_records_its_cancellation() -> None:
    tools = Tools({"slow": ToolOutput(text="late")})
    live = session(tools, Published())
    await live.start()
    async with anyio.create_task_group() as group:
        group.start_soon(live.call, "c1", "slow", {"wait": True})
        await tools.reached.wait()
        group.cancel_scope.cancel()
    recorded = live.history[-1].event
    assert isinstance(recorded, ToolResultRecorded)
    assert (recorded.ok, recorded.fault, recorded.body) == (
        False, CANCELLED, f"Tool returned an error: {CANCELLED}")
    await live.end("closed")
    assert live.history[-1].event == SessionEnded(calls=1, cause="closed")


async def test_calls_still_running_when_the_session_ends_are_named_unanswered() -> None:
    tools = Tools({"slow": ToolOutput(text="late")})
    live = session(tools, Published())
    await live.start()
    async with anyio.create_task_group() as group:
        group.start_soon(live.call, "c1", "slow", {"wait": True})
        await tools.reached.wait()
        live.ending()
        group.cancel_scope.cancel()
    await live.end("SIGTERM")
    assert [e.kind for e in live.history] == ["SessionStarted", "ToolCalled", "SessionEnded"]
    assert live.history[-1].event == SessionEnded(calls=1, cause="SIGTERM", unanswered=["c1"])


async def concurrent_session(spec: SessionSpec = SPEC) -> list[Envelope]:
    """Three calls at once: one waits while another finishes, one is cancelled."""
    tools = Tools({"cam__frame": photos(3), "slow": ToolOutput(text="late"),
                   "stuck": ToolOutput(text="never")})
    live = session(tools, Published(), spec)
    await live.start()
    async with anyio.create_task_group() as group:
        group.start_soon(live.call, "c1", "slow", {"wait": True})
        await tools.reached.wait()
        await live.call("c2", "cam__frame", {})
        tools.release.set()
    with anyio.CancelScope() as scope:
        tools.release = anyio.Event()
        tools.reached = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(live.call, "c3", "stuck", {"wait": True})
            await tools.reached.wait()
            scope.cancel()
    await live.end("closed")
    return live.history


async def test_a_session_verifies_against_todays_gateway() -> None:
    recorded = await concurrent_session(msgspec.structs.replace(
        SPEC, result_limits=ResultLimits(max_bytes=2000)))
    kinds = [e.kind for e in recorded]
    assert kinds == ["SessionStarted", "ToolCalled", "ToolCalled", "ImagesNormalized",
                     "ToolResultRecorded", "ImagesCapped", "ResultSent", "ToolResultRecorded",
                     "ResultSent", "ToolCalled", "ToolResultRecorded", "SessionEnded"]
    verification = await verify(recorded)
    assert verification.divergence is None
    assert verification.produced == verification.recorded == len(recorded)


async def test_a_session_recorded_with_other_limits_diverges_at_the_cap() -> None:
    recorded = await concurrent_session(msgspec.structs.replace(
        SPEC, result_limits=ResultLimits(max_bytes=2000)))
    started = recorded[0].event
    assert isinstance(started, SessionStarted)
    edited = [msgspec.structs.replace(recorded[0], event=msgspec.structs.replace(
        started, result_limits=ResultLimits(max_bytes=10**9))), *recorded[1:]]
    verification = await verify(edited)
    assert verification.divergence is not None
    assert verification.divergence.seq == 6
    assert isinstance(verification.divergence.expected, ImagesCapped)
    assert isinstance(verification.divergence.produced, ResultSent)


async def test_a_session_cut_short_verifies_as_far_as_it_goes() -> None:
    recorded = (await concurrent_session())[:-3]  # the process died after c2's result
    verification = await verify(recorded)
    assert verification.divergence is None and verification.interrupted


@pytest.mark.parametrize("language", ["ja", "zh"])
async def test_the_notes_are_in_the_village_language(language: Language) -> None:
    output = photos(2)
    spec = msgspec.structs.replace(SPEC, language=language,
                                   result_limits=ResultLimits(max_bytes=1000))
    live = session(Tools({"t": output}), Published(), spec)
    await live.start()
    notes = (await live.call("c1", "t", {})).notes
    assert notes == [{"ja": "（最後の 2 枚の画像は送りませんでした。含めるとツールの結果がこのクライアン"
                            "トの受け取れる大きさを超えます）",
                      "zh": "（最后 2 张图片未发送：加上它们，工具结果会超过此客户端可接受的大小）"}[language]]
