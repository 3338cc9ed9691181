"""Resource links and annotations, against a real MCP server (`tests/mcp/servers/linking.py`):
a link to an image or text on a server that serves resources is read (`resources/read`) and
delivered like returned content, the read recorded without its bytes and replayed like a tool
result; a link that is not followed says it is a link; content for the user only is shown and
recorded, never sent; content for the assistant only is sent, never shown."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from fuseforks.core.canonical import ToolCall, ToolResultMessage
from fuseforks.engine.replay import verify
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.types import ResourceRead, ToolResultRecorded
from fuseforks.live.tools import HubTools
from fuseforks.mcp import ToolHub
from fuseforks.ports.tools import LinkRead, ToolOutput
from fuseforks.projections.display import tool_displays
from fuseforks.projections.log import turn_log
from tests.helpers.models import ScriptedModel, one_tool_round
from tests.mcp.conftest import hosted_hub, stdio
from tests.mcp.servers.linking import NOTES, screen_png

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub() -> AsyncIterator[ToolHub]:
    async with hosted_hub(ToolHub([stdio("links", "linking.py")])) as shared:
        yield shared


async def test_a_link_to_text_is_read_and_delivered_after_its_label(hub: ToolHub) -> None:
    output = await hub.call("links__link_to_text", {}, "en")
    assert output.text == (
        "notes are here\n"
        "[resource link file:///notes/today.txt] today.txt (text/plain): today's notes\n"
        f"[resource file:///notes/today.txt]\n{NOTES}")
    assert output.reads == [LinkRead(uri="file:///notes/today.txt", outcome="read",
                                     digest=hashlib.sha256(NOTES.encode()).hexdigest(),
                                     size=len(NOTES.encode()))]


async def test_a_link_to_an_image_goes_through_the_image_pipeline(hub: ToolHub) -> None:
    output = await hub.call("links__link_to_image", {}, "en")
    assert output.text == ("[resource link file:///shots/screen.png] Screen (image/png)\n"
                           "[resource file:///shots/screen.png]")
    (image,) = output.images
    assert (image.source_format, image.path, image.data) == ("PNG", "pass_through", screen_png())
    assert output.reads == [LinkRead(uri="file:///shots/screen.png", outcome="read",
                                     digest=hashlib.sha256(screen_png()).hexdigest(),
                                     size=len(screen_png()))]


async def test_a_link_that_cannot_be_read_says_so(hub: ToolHub) -> None:
    output = await hub.call("links__link_missing", {}, "en")
    assert output.text == ("[resource link file:///shots/gone.png] gone.png (image/png)\n"
                           "(the linked resource was not read: the server could not read it)")
    assert [(r.uri, r.outcome, r.digest) for r in output.reads] == [
        ("file:///shots/gone.png", "failed", None)]


async def test_a_link_that_is_not_followed_stays_a_link(hub: ToolHub) -> None:
    output = await hub.call("links__link_to_archive", {}, "ja")
    assert output == ToolOutput(
        text="[resource link file:///backup.zip] backup.zip (application/zip): last night's backup")


async def test_content_for_one_audience(hub: ToolHub) -> None:
    output = await hub.call("links__annotated", {}, "en")
    assert output.text == "42 rows\nrow ids: 1-42"
    assert output.images == []
    assert output.shown == ("42 rows\nShowing 42 rows in the table below.\n"
                            "(an image meant for the user; it was not sent to the model)")


def _model(*tools: str) -> ScriptedModel:
    return ScriptedModel(one_tool_round(
        *(ToolCall(id=f"c{n}", name=name, arguments={}) for n, name in enumerate(tools))))


async def test_reads_and_audiences_are_recorded_and_replay_exactly(hub: ToolHub) -> None:
    model = _model("links__link_to_text", "links__annotated")
    outcome = await Turn(TurnSpec(agent="a", request="notes?"), model, HubTools(hub)).run()
    events = [e.event for e in outcome.history]
    (read,) = [e for e in events if isinstance(e, ResourceRead)]
    assert (read.uri, read.outcome, read.size, read.digest) == (
        "file:///notes/today.txt", "read", len(NOTES.encode()),
        hashlib.sha256(NOTES.encode()).hexdigest())
    annotated = next(e for e in events if isinstance(e, ToolResultRecorded)
                     and e.name == "links__annotated")
    assert (annotated.body, annotated.shown) == (
        "42 rows\nrow ids: 1-42",
        "42 rows\nShowing 42 rows in the table below.\n"
        "(an image meant for the user; it was not sent to the model)")
    sent = {m.tool_call_id: m.text for m in model.requests[1].messages
            if isinstance(m, ToolResultMessage)}
    assert "Showing 42 rows" not in sent["c1"] and "row ids" in sent["c1"]
    shown = {d.name: d.text for d in tool_displays(outcome.history)}
    assert "row ids" not in shown["links__annotated"]
    assert "tool resource read: agent=a round=1 uri=file:///notes/today.txt outcome=read " \
           f"bytes={len(NOTES.encode())}" in turn_log(outcome.history)
    verification = await verify(outcome.history)
    assert verification.identical, verification.divergence


async def test_chat_shows_what_is_meant_for_the_user(hub: ToolHub) -> None:
    from fuseforks.cli.chat import ChatView

    outcome = await Turn(TurnSpec(agent="a", request="rows?"), _model("links__annotated"),
                         HubTools(hub)).run()
    lines: list[str] = []
    view = ChatView()
    view._echo = lines.append
    await view.handle(outcome.history)
    assert "  Showing 42 rows in the table below." in lines
    assert not any("row ids" in line for line in lines)
