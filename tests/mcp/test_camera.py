"""The demo camera server, run as `python -m fuseforks.demo.camera` over stdio and HTTP."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from mcp import Client
from PIL import Image

from fuseforks.demo.camera import PALETTE, build_server, frame_colours, frame_text, render_frame
from fuseforks.mcp import ToolHub
from tests.mcp.conftest import camera_stdio, http, http_server

COLOURS = dict(PALETTE)


def close_to(pixel: tuple[int, ...], colour: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 6 for a, b in zip(pixel, colour, strict=True))


def test_palette_walk_is_documented_and_halves_always_differ() -> None:
    assert [frame_colours(seq) for seq in range(1, 6)] == [
        ("red", "green"),
        ("green", "blue"),
        ("blue", "yellow"),
        ("yellow", "red"),
        ("red", "green"),
    ]


def test_frame_is_a_640x424_jpeg_with_the_two_colours() -> None:
    frame = Image.open(io.BytesIO(render_frame(2)))
    assert (frame.format, frame.size) == ("JPEG", (640, 424))
    rgb = frame.convert("RGB")
    assert close_to(rgb.getpixel((100, 200)), COLOURS["green"])
    assert close_to(rgb.getpixel((540, 200)), COLOURS["blue"])


async def test_live_view_frame_passes_through_byte_identical_over_stdio() -> None:
    async with ToolHub([camera_stdio()]) as hub:
        first = await hub.call("cam__live_view_image", {}, "en")
        second = await hub.call("cam__live_view_image", {}, "en")
    for seq, output in ((1, first), (2, second)):
        frame = render_frame(seq)
        assert output.text == frame_text(seq, frame)
        assert json.loads(output.text) == {
            "height": 424,
            "jpeg_bytes": len(frame),
            "seq": seq,
            "width": 640,
        }
        (image,) = output.images
        assert (image.path, image.media_type, image.width, image.height) == (
            "pass_through",
            "image/jpeg",
            640,
            424,
        )
        assert image.data == frame
    assert first.images[0].digest != second.images[0].digest


async def test_camera_status_is_text_only() -> None:
    async with ToolHub([camera_stdio()]) as hub:
        await hub.call("cam__live_view_image", {}, "en")
        output = await hub.call("cam__camera_status", {}, "en")
    assert output.images == [] and output.dropped == []
    assert output.text == (
        '{"connected":true,"frames_taken":1,"live_view":true,"model":"fuseforks demo camera"}'
    )


@pytest.fixture(scope="module")
def camera_url() -> Iterator[str]:
    with http_server(["-m", "fuseforks.demo.camera"]) as url:
        yield url


async def test_live_view_frame_passes_through_over_http(camera_url: str) -> None:
    async with ToolHub([http("cam", camera_url)]) as hub:
        output = await hub.call("cam__live_view_image", {}, "en")
    seq = json.loads(output.text)["seq"]
    assert output.images[0].data == render_frame(seq)


async def test_same_server_in_process_gives_the_same_frame() -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool("live_view_image", {})
    assert [block.type for block in result.content] == ["image", "text"]
    assert result.content[1].text == frame_text(1, render_frame(1))
