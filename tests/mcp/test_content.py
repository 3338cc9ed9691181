"""Every kind of MCP tool content, from a real server over stdio, streamable HTTP and HTTP+SSE.

The same expectations hold on every transport; the streamable HTTP server answers like a 2025-era
server (initialize handshake, results as SSE events), which is what most deployed servers do, and
the SSE server speaks the older transport (an event stream plus a message endpoint).
"""

from __future__ import annotations

import base64
import hashlib
import io
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from PIL import Image

from fuseforks.mcp import ToolHub
from fuseforks.ports.tools import ToolOutput
from tests.mcp.conftest import SERVERS, hosted_hub, http, http_server, sse, stdio
from tests.mcp.servers import pictures

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["stdio", "http", "sse"])
async def hub(request: pytest.FixtureRequest) -> AsyncIterator[ToolHub]:
    if request.param == "stdio":
        async with hosted_hub(ToolHub([stdio("content", "content.py")])) as shared:
            yield shared
    elif request.param == "http":
        with http_server([str(SERVERS / "content.py"), "--legacy"]) as url:
            async with hosted_hub(ToolHub([http("content", url)])) as shared:
                yield shared
    else:
        with http_server([str(SERVERS / "content.py")], transport="sse") as url:
            async with hosted_hub(ToolHub([sse("content", url)])) as shared:
                yield shared


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_text_only_result_is_exactly_a_text_only_output(hub: ToolHub) -> None:
    output = await hub.call("content__text_only", {}, "en")
    assert output == ToolOutput(text="line one\nline two")


async def test_jpeg_passes_through_byte_for_byte_after_its_text(hub: ToolHub) -> None:
    output = await hub.call("content__jpeg", {}, "en")
    sent = pictures.solid_jpeg((255, 0, 0))
    assert output.text == "a red frame"
    assert [(i.path, i.media_type, i.width, i.height) for i in output.images] == [
        ("pass_through", "image/jpeg", 320, 240)
    ]
    assert output.images[0].data == sent
    assert output.images[0].digest == sha(sent)
    assert (output.dropped, output.is_error, output.fault) == ([], False, None)


async def test_image_only_result_says_how_many_images(hub: ToolHub) -> None:
    output = await hub.call("content__image_only", {}, "en")
    assert output.text == "(1 image)"
    assert len(output.images) == 1


async def test_image_only_note_is_in_the_village_language(hub: ToolHub) -> None:
    assert (await hub.call("content__image_only", {}, "ja")).text == "（画像 1 枚）"
    assert (await hub.call("content__image_only", {}, "zh")).text == "（1 张图片）"


async def test_png_with_alpha_is_re_encoded_onto_white(hub: ToolHub) -> None:
    output = await hub.call("content__png_alpha", {}, "en")
    assert output.text == "(1 image)"
    (image,) = output.images
    assert (image.path, image.media_type, image.source_format) == (
        "re_encoded",
        "image/webp",  # two colours: a graphic, sent as lossless WebP
        "PNG",
    )
    decoded = Image.open(io.BytesIO(image.data)).convert("RGB")
    assert decoded.size == (200, 100)
    left = decoded.getpixel((10, 50))
    right = decoded.getpixel((190, 50))
    assert all(channel >= 250 for channel in left)  # transparent half flattened onto white
    assert right[2] >= 240 and right[0] <= 10 and right[1] <= 10


async def test_an_animated_gif_sends_its_first_frame_and_says_how_many_there_were(
    hub: ToolHub,
) -> None:
    output = await hub.call("content__gif", {}, "en")
    assert output.text == (
        "an animation\n(image 1 is the first frame of an animation of 3 frames)"
    )
    (image,) = output.images
    assert (image.source_format, image.path, image.width, image.height, image.frames) == (
        "GIF", "re_encoded", 40, 30, 3)
    assert Image.open(io.BytesIO(image.data)).convert("RGB").getpixel((20, 15)) == (255, 0, 0)
    assert (await hub.call("content__gif", {}, "ja")).text == (
        "an animation\n（1 枚目の画像は 3 コマのアニメーションの最初のコマです）")


async def test_tiff_pages_and_bmp_are_carried(hub: ToolHub) -> None:
    output = await hub.call("content__tiff_and_bmp", {}, "en")
    assert output.text == "(2 images)\n(image 1 is the first page of 2 pages)"
    assert [(i.source_format, i.width, i.height, i.frames) for i in output.images] == [
        ("TIFF", 60, 20, 2), ("BMP", 24, 16, 1)]
    assert output.dropped == []


async def test_svg_stays_unsupported_with_a_note(hub: ToolHub) -> None:
    output = await hub.call("content__svg", {}, "en")
    assert output.text == "(image 1 was not sent: its format is not supported)"
    assert [(d.reason, d.index, d.source_format) for d in output.dropped] == [
        ("unsupported_format", 0, "SVG")
    ]


async def test_broken_base64_is_dropped_as_unreadable(hub: ToolHub) -> None:
    output = await hub.call("content__broken_base64", {}, "en")
    assert output.text == "broken\n(image 1 was not sent: it could not be read)"
    assert [(d.reason, d.index) for d in output.dropped] == [("unreadable", 0)]
    assert output.is_error is False


async def test_five_images_keep_the_first_four_in_order(hub: ToolHub) -> None:
    output = await hub.call("content__five_images", {}, "en")
    assert output.text == (
        "five frames\n(image 5 was not sent: a tool result carries at most 4 images)"
    )
    expected = [sha(pictures.solid_jpeg(colour)) for colour in pictures.FIVE_COLOURS[:4]]
    assert [image.digest for image in output.images] == expected
    assert [(d.reason, d.index) for d in output.dropped] == [("too_many", 4)]


async def test_empty_result_says_so(hub: ToolHub) -> None:
    assert await hub.call("content__empty", {}, "en") == ToolOutput(text="(empty result)")


async def test_structured_content_without_text_is_shown_as_its_json(hub: ToolHub) -> None:
    output = await hub.call("content__structured_only", {}, "en")
    assert output == ToolOutput(text='{"focus":"locked","seq":7}')


async def test_is_error_result_gets_the_prefix_and_no_fault(hub: ToolHub) -> None:
    output = await hub.call("content__is_error", {}, "en")
    assert output == ToolOutput(text="Tool returned an error: camera busy", is_error=True)
    assert (await hub.call("content__is_error", {}, "zh")).text == "工具返回了错误：camera busy"


async def test_audio_is_noted_never_dumped(hub: ToolHub) -> None:
    output = await hub.call("content__audio", {}, "en")
    assert output.text == (
        "recorded\n(non-text content was returned (audio); it cannot be carried on this path)"
    )
    assert base64.b64encode(b"RIFF").decode()[:4] not in output.text
    assert output.images == [] and output.dropped == []


async def test_embedded_blob_resource_is_noted_never_dumped(hub: ToolHub) -> None:
    output = await hub.call("content__embedded_blob", {}, "en")
    assert output.text == (
        "raw data\n(non-text content was returned (embedded resource); "
        "it cannot be carried on this path)"
    )
    assert "c2VjcmV0" not in output.text and "secret" not in output.text


async def test_blob_images_go_through_the_image_pipeline_and_text_blobs_read_as_text(
    hub: ToolHub,
) -> None:
    output = await hub.call("content__embedded_blobs", {}, "en")
    assert output.text == (
        "files\n[resource file:///shots/red.png]\n[resource file:///cam/blue.jpg]\n"
        "[resource file:///notes.txt]\nplain notes\nsecond line\n"
        "[resource file:///old.txt]\ncafé\n"
        '[resource file:///data.json]\n{"focus": "locked"}\n'
        "(non-text content was returned (embedded resource); it cannot be carried on this path)"
    )
    assert [(i.source_format, i.path) for i in output.images] == [
        ("PNG", "re_encoded"), ("JPEG", "pass_through")]
    assert output.images[1].data == pictures.solid_jpeg((0, 0, 255))
    assert output.image_offsets == [
        len("files\n[resource file:///shots/red.png]"),
        len("files\n[resource file:///shots/red.png]\n[resource file:///cam/blue.jpg]"),
    ]
    assert "JVBERi" not in output.text and "%PDF" not in output.text


async def test_embedded_text_resource_reaches_the_model_as_its_uri_and_text(hub: ToolHub) -> None:
    output = await hub.call("content__embedded_text", {}, "ja")
    assert output == ToolOutput(text="[resource file:///tmp/notes.txt]\ninner notes")


async def test_embedded_text_resources_keep_their_place_among_text_blocks(hub: ToolHub) -> None:
    output = await hub.call("content__embedded_text_between", {}, "en")
    assert output == ToolOutput(
        text="see\n[resource https://example.org/readme.md]\n# Title\nbody\n"
        "[resource file:///tmp/empty.txt]\nend"
    )


async def test_interleaved_images_record_where_in_the_text_each_sat(hub: ToolHub) -> None:
    output = await hub.call("content__interleaved", {}, "en")
    assert output.text == "frame A follows\nframe B follows"
    assert [i.digest for i in output.images] == [
        sha(pictures.solid_jpeg((255, 0, 0))),
        sha(pictures.solid_jpeg((0, 255, 0))),
    ]
    assert output.image_offsets == [len("frame A follows"), len(output.text)]


async def test_offsets_are_those_of_the_kept_images(hub: ToolHub) -> None:
    output = await hub.call("content__interleaved_with_drops", {}, "en")
    assert output.text == "one\ntwo\n(image 2 was not sent: its format is not supported)"
    assert [i.digest for i in output.images] == [
        sha(pictures.solid_jpeg(colour)) for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255))
    ]
    assert output.image_offsets == [0, len("one\ntwo"), len("one\ntwo")]


async def test_long_words_in_a_text_block_arrive_unchanged(hub: ToolHub) -> None:
    assert await hub.call("content__long_words", {}, "en") == ToolOutput(text=pictures.LONG_WORDS)


async def test_a_link_the_server_cannot_read_keeps_its_label_and_says_so(hub: ToolHub) -> None:
    output = await hub.call("content__resource_link", {}, "en")
    assert output.text == (
        "see\n[resource link file:///photos/cat.jpg] cat.jpg (image/jpeg)\n"
        "(the linked resource was not read: the server could not read it)")
    assert output.images == []
    assert [(read.uri, read.outcome, read.digest, read.size) for read in output.reads] == [
        ("file:///photos/cat.jpg", "failed", None, 0)]


async def test_lying_mime_type_is_ignored_format_comes_from_the_bytes(hub: ToolHub) -> None:
    output = await hub.call("content__lying_mime", {}, "en")
    (image,) = output.images
    assert (image.media_type, image.path, image.source_format) == (
        "image/jpeg",
        "pass_through",
        "JPEG",
    )
    assert image.data == pictures.solid_jpeg((0, 0, 255))


async def test_tools_are_listed_with_the_server_prefix_and_schema(hub: ToolHub) -> None:
    tools = {tool.name: tool for tool in hub.list_tools()}
    assert "content__jpeg" in tools and "content__png_10_mb" in tools
    jpeg = tools["content__jpeg"]
    assert (jpeg.server, jpeg.tool, jpeg.description) == (
        "content",
        "jpeg",
        "One small red JPEG after a text block.",
    )
    assert jpeg.input_schema["type"] == "object"
