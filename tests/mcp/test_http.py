"""Streamable HTTP specifics: large images (the SDK's 1 MiB per-event default would break them)
and configured headers.

The server answers like a 2025-era server, so each result travels as one SSE event; a 1.5 MB JPEG is
~2 MB of base64. The hub raises the SDK's `max_sse_event_size`; the control case keeps the SDK's
default and shows the exact failure it would otherwise give.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from fuseforks.mcp import HttpServer, ToolHub
from fuseforks.ports.tools import ToolOutput
from tests.mcp.conftest import SERVERS, http, http_server
from tests.mcp.servers import pictures

SDK_DEFAULT_EVENT_BYTES = 1024 * 1024


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    with http_server([str(SERVERS / "content.py"), "--legacy"]) as url:
        yield url


@pytest.fixture(scope="module")
def modern_url() -> Iterator[str]:
    with http_server([str(SERVERS / "content.py")]) as url:
        yield url


async def test_jpeg_of_1_5_mb_arrives_byte_identical(legacy_url: str) -> None:
    async with ToolHub([http("content", legacy_url)]) as hub:
        output = await hub.call("content__jpeg_1_5_mb", {}, "en")
    sent = pictures.jpeg_1_5_mb()
    assert 1_400_000 < len(sent) < 1_600_000
    assert output.fault is None
    (image,) = output.images
    assert (image.path, image.size, image.width, image.height) == (
        "pass_through",
        len(sent),
        1400,
        1200,
    )
    assert image.digest == hashlib.sha256(sent).hexdigest()


async def test_jpeg_just_under_2_mib_arrives_byte_identical(legacy_url: str) -> None:
    async with ToolHub([http("content", legacy_url)]) as hub:
        output = await hub.call("content__jpeg_near_2_mib", {}, "en")
    sent = pictures.jpeg_near_2_mib()
    assert 1_950_000 < len(sent) <= 2 * 1024 * 1024
    (image,) = output.images
    assert (image.path, image.data == sent) == ("pass_through", True)


async def test_png_of_10_mb_arrives_and_is_re_encoded(legacy_url: str) -> None:
    async with ToolHub([http("content", legacy_url)]) as hub:
        output = await hub.call("content__png_10_mb", {}, "en")
    assert len(pictures.png_10_mb()) > 10_000_000
    assert output.text == "(1 image)"
    (image,) = output.images
    assert (image.path, image.source_format, image.width, image.height) == (
        "re_encoded",
        "PNG",
        1568,
        1485,
    )
    assert image.source_size == len(pictures.png_10_mb())
    assert image.size <= 2 * 1024 * 1024


async def test_the_sdk_default_event_limit_would_lose_the_image(legacy_url: str) -> None:
    async with ToolHub(
        [http("content", legacy_url)], max_event_bytes=SDK_DEFAULT_EVENT_BYTES
    ) as hub:
        output = await hub.call("content__jpeg_1_5_mb", {}, "en")
    assert output.fault == (
        "server 'content' closed the connection during the call "
        "(SSE stream failed: Server-sent event exceeded the 1048576 byte limit.)"
    )
    assert output.is_error and output.images == []


async def test_10_mb_png_also_arrives_from_a_2026_era_server(modern_url: str) -> None:
    async with ToolHub([http("content", modern_url)]) as hub:
        output = await hub.call("content__png_10_mb", {}, "en")
    assert [(i.path, i.width) for i in output.images] == [("re_encoded", 1568)]


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_configured_headers_reach_the_server(
    era: str, legacy_url: str, modern_url: str
) -> None:
    url = legacy_url if era == "legacy" else modern_url
    server = HttpServer(name="content", url=url, headers={"X-Camera-Token": "t-123"})
    async with ToolHub([server]) as hub:
        output = await hub.call("content__header", {"name": "x-camera-token"}, "en")
    assert output == ToolOutput(text="t-123")


async def test_http_server_dying_mid_call_then_unreachable_on_restart() -> None:
    with http_server([str(SERVERS / "faulty.py")]) as url:
        async with ToolHub([http("faulty", url)]) as hub:
            crashed = await hub.call("faulty__crash", {}, "en")
            restart = await hub.call("faulty__pid", {}, "en")
            later = await hub.call("faulty__pid", {}, "en")
    unreachable = f"server 'faulty' could not be reached at {url}: All connection attempts failed"
    assert crashed.fault == "server 'faulty' closed the connection during the call"
    assert restart.fault == unreachable
    assert later.fault == f"server 'faulty' is down (restart failed): {unreachable}"
