"""Hostile content around the engine: base64 where text belongs never fails a turn or reaches the
record, and a tool port that raises becomes a tool error."""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

from fuseforks.core.canonical import ChatResponse, ToolCall, Usage
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.codec import encode_envelope
from fuseforks.events.types import ResponseReceived, ToolCalled, ToolResultRecorded, ToolSpecRecord
from fuseforks.ports.tools import ToolOutput
from tests.helpers.models import ScriptedModel


def jpeg_base64() -> str:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), (10, 200, 30)).save(out, "JPEG")
    return base64.b64encode(out.getvalue()).decode()


class Tools:
    def __init__(self, behaviour: Any) -> None:
        self.behaviour = behaviour

    def tool_specs(self) -> list[ToolSpecRecord]:
        return [ToolSpecRecord(name="t")]

    def server_of(self, name: str) -> str:
        return "s"

    async def call(self, name: str, arguments: dict[str, Any], language: str) -> ToolOutput:
        return self.behaviour(arguments)


def respond(text: str = "", calls: list[ToolCall] | None = None) -> ChatResponse:
    return ChatResponse(text=text, tool_calls=calls or [], usage=Usage(), stop_reason="x",
                        raw_model="m")


async def test_base64_in_model_text_tool_arguments_and_tool_text_is_omitted_not_fatal() -> None:
    data = jpeg_base64()
    model = ScriptedModel([respond(f"look: {data}", [ToolCall(id="c1", name="t", arguments={"img": data})]),
                   respond(f"done {data}")])
    tools = Tools(lambda arguments: ToolOutput(text=f"echo {arguments['img']}"))
    result = await Turn(TurnSpec(agent="a", request="go"), model, tools).run()
    marker = f"[base64 omitted: {len(data)} characters]"
    assert result.stop == "answered" and result.answer == f"done {marker}"
    first = next(e.event for e in result.history if isinstance(e.event, ResponseReceived))
    assert first.text == f"look: {marker}"
    assert first.tool_calls[0].arguments == f'{{"img":"{marker}"}}'
    called = next(e.event for e in result.history if isinstance(e.event, ToolCalled))
    assert called.arguments == f'{{"img":"{marker}"}}'
    recorded = next(e.event for e in result.history if isinstance(e.event, ToolResultRecorded))
    assert recorded.body == f"echo {marker}"
    assert all(data.encode() not in encode_envelope(e) for e in result.history)


async def test_a_tool_port_that_raises_becomes_a_tool_error_and_the_turn_goes_on() -> None:
    def explode(arguments: dict[str, Any]) -> ToolOutput:
        raise RuntimeError("socket closed")

    model = ScriptedModel([respond(calls=[ToolCall(id="c1", name="t")]), respond("sorry")])
    result = await Turn(TurnSpec(agent="a", request="go"), model, Tools(explode)).run()
    recorded = next(e.event for e in result.history if isinstance(e.event, ToolResultRecorded))
    assert (recorded.ok, recorded.body, recorded.fault) == (
        False, "Tool returned an error: RuntimeError: socket closed", "RuntimeError: socket closed")
    assert result.stop == "answered" and result.answer == "sorry"
