"""The plan of a tool result as a turn's model reads it, on hand-built MCP content: the rules
without a server in between."""

from __future__ import annotations

import base64

from mcp.types import AudioContent, ImageContent, ResourceLink, TextContent

from fuseforks.core.media import ENGINE_LIMITS
from fuseforks.core.names import Language
from fuseforks.mcp.plan import plan_for_model
from fuseforks.ports.tools import ToolOutput, fault_output
from tests.mcp.servers import pictures


async def render_tool_output(content: list, is_error: bool, language: Language) -> ToolOutput:
    plan = await plan_for_model(content, is_error=is_error, language=language,
                                limits=ENGINE_LIMITS)
    return plan.tool_output()


def image(data: bytes, mime: str = "image/jpeg") -> ImageContent:
    return ImageContent(data=base64.b64encode(data).decode(), mime_type=mime)


async def test_text_blocks_are_joined_by_newlines_and_nothing_else_is_added() -> None:
    content = [TextContent(text="a"), TextContent(text="b\nc")]
    assert await render_tool_output(content, False, "en") == ToolOutput(text="a\nb\nc")


async def test_no_blocks_and_an_empty_text_block_are_both_the_empty_result() -> None:
    assert (await render_tool_output([], False, "ja")).text == "（空の結果）"
    assert (await render_tool_output([TextContent(text="")], False, "en")).text == "(empty result)"


async def test_image_count_in_the_image_only_note_counts_sent_images() -> None:
    content = [image(pictures.solid_jpeg((1, 2, 3))), image(pictures.SVG, "image/svg+xml")]
    output = await render_tool_output(content, False, "en")
    assert output.text == "(1 image)\n(image 2 was not sent: its format is not supported)"


async def test_all_images_dropped_leaves_only_the_notes_not_the_empty_result() -> None:
    output = await render_tool_output([image(pictures.SVG, "image/svg+xml")], False, "en")
    assert output.text == "(image 1 was not sent: its format is not supported)"
    assert output.images == []


async def test_blocks_keep_their_order_and_notes_follow_the_body() -> None:
    content = [
        TextContent(text="first"),
        AudioContent(data="UklGRg==", mime_type="audio/wav"),
        ResourceLink(uri="https://example.org/a.png", name="a"),
        image(b"garbage"),
        TextContent(text="last"),
    ]
    output = await render_tool_output(content, False, "en")
    assert output.text == (
        "first\n"
        "(non-text content was returned (audio); it cannot be carried on this path)\n"
        "[resource link https://example.org/a.png] a\n"
        "last\n"
        "(image 1 was not sent: it could not be read)"
    )


async def test_is_error_prefixes_everything_the_model_reads() -> None:
    content = [TextContent(text="no frame"), image(pictures.SVG, "image/svg+xml")]
    output = await render_tool_output(content, True, "en")
    assert output.text == (
        "Tool returned an error: no frame\n(image 1 was not sent: its format is not supported)"
    )
    assert output.is_error and output.fault is None


def test_fault_output_carries_the_reason_for_the_log() -> None:
    assert fault_output("server 'x' closed the connection during the call", "zh") == ToolOutput(
        text="工具返回了错误：server 'x' closed the connection during the call",
        is_error=True,
        fault="server 'x' closed the connection during the call",
    )


async def test_the_plan_keeps_every_image_in_a_slot_of_its_block() -> None:
    content = [TextContent(text="t")] + [
        image(pictures.solid_jpeg(colour)) for colour in pictures.FIVE_COLOURS
    ]
    plan = await plan_for_model(content, is_error=False, language="en", limits=ENGINE_LIMITS)
    assert [(slot.block, slot.image is not None) for slot in plan.slots] == [
        (1, True), (2, True), (3, True), (4, True), (5, False)]
    assert [b.kind for b in plan.blocks] == ["text", *["image"] * 5]
    output = plan.tool_output()
    assert (output.images, output.dropped) == (plan.kept, plan.dropped)
    assert output.text == "t\n(image 5 was not sent: a tool result carries at most 4 images)"
