"""HTTP specifics, on streamable HTTP and on the older HTTP+SSE transport alike: large images (the
SDK's 1 MiB per-event default would break them), configured headers, crashes, hangs and HTTP errors.

The streamable HTTP server answers like a 2025-era server, so each result travels as one SSE event;
so does every message of the SSE transport. A 1.5 MB JPEG is ~2 MB of base64. The hub raises the
per-event limit to 64 MiB on both; the control case keeps the SDK's default and shows the failure
it would otherwise give.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client.streamable_http import DEFAULT_MAX_SSE_EVENT_SIZE

from fuseforks.mcp import HttpServer, ToolHub
from fuseforks.ports.tools import ToolOutput
from tests.helpers.ports import free_port
from tests.mcp.conftest import SERVERS, http, http_server, sse
from tests.mcp.servers import pictures


@pytest.fixture(scope="module")
def legacy_url() -> Iterator[str]:
    with http_server([str(SERVERS / "content.py"), "--legacy"]) as url:
        yield url


@pytest.fixture(scope="module")
def modern_url() -> Iterator[str]:
    with http_server([str(SERVERS / "content.py")]) as url:
        yield url


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with http_server([str(SERVERS / "content.py")], transport="sse") as url:
        yield url


@pytest.fixture(params=["http", "sse"])
def content(request: pytest.FixtureRequest) -> HttpServer:
    """The content server over streamable HTTP (2025-era) and over HTTP+SSE."""
    if request.param == "http":
        return http("content", request.getfixturevalue("legacy_url"))
    return sse("content", request.getfixturevalue("sse_url"))


async def test_jpeg_of_1_5_mb_arrives_byte_identical(content: HttpServer) -> None:
    async with ToolHub([content]) as hub:
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


async def test_jpeg_just_under_2_mib_arrives_byte_identical(content: HttpServer) -> None:
    async with ToolHub([content]) as hub:
        output = await hub.call("content__jpeg_near_2_mib", {}, "en")
    sent = pictures.jpeg_near_2_mib()
    assert 1_950_000 < len(sent) <= 2 * 1024 * 1024
    (image,) = output.images
    assert (image.path, image.data == sent) == ("pass_through", True)


async def test_png_of_10_mb_arrives_and_is_re_encoded(content: HttpServer) -> None:
    async with ToolHub([content]) as hub:
        output = await hub.call("content__png_10_mb", {}, "en")
    assert len(pictures.png_10_mb()) > 10_000_000
    assert output.text == "(1 image)\n(image 1: 1900×1800, sent at 1568×1485 (×0.83))"
    (image,) = output.images
    assert (image.path, image.source_format, image.width, image.height) == (
        "re_encoded",
        "PNG",
        1568,
        1485,
    )
    assert image.source_size == len(pictures.png_10_mb())
    assert image.size <= 2 * 1024 * 1024


async def test_the_sdk_default_event_limit_would_lose_the_image(content: HttpServer) -> None:
    async with ToolHub([content], max_event_bytes=DEFAULT_MAX_SSE_EVENT_SIZE) as hub:
        output = await hub.call("content__jpeg_1_5_mb", {}, "en")
    # Our words, then the SDK's account of the broken stream in parentheses, in its words.
    assert output.fault is not None
    assert output.fault.startswith("server 'content' closed the connection during the call (")
    assert output.fault.endswith(")") and "\n" not in output.fault
    assert output.is_error and output.images == []


async def test_10_mb_png_also_arrives_from_a_2026_era_server(modern_url: str) -> None:
    async with ToolHub([http("content", modern_url)]) as hub:
        output = await hub.call("content__png_10_mb", {}, "en")
    assert [(i.path, i.width) for i in output.images] == [("re_encoded", 1568)]


@pytest.mark.parametrize("era", ["legacy", "modern", "sse"])
async def test_configured_headers_reach_the_server(era: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue(f"{era}_url")
    server = HttpServer(
        name="content", url=url, headers={"X-Camera-Token": "t-123"},
        transport="sse" if era == "sse" else "http",
    )
    async with ToolHub([server]) as hub:
        output = await hub.call("content__header", {"name": "x-camera-token"}, "en")
    assert output == ToolOutput(text="t-123")


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_http_server_dying_mid_call_then_unreachable_on_restart(transport: str) -> None:
    with http_server([str(SERVERS / "faulty.py")], transport=transport) as url:
        server = HttpServer(name="faulty", url=url, transport="sse" if transport == "sse" else "http")
        async with ToolHub([server]) as hub:
            crashed = await hub.call("faulty__crash", {}, "en")
            restart = await hub.call("faulty__pid", {}, "en")
            later = await hub.call("faulty__pid", {}, "en")
    reached = f"server 'faulty' could not be reached at {url}: "  # then the client's reason
    assert crashed.fault == "server 'faulty' closed the connection during the call"
    assert restart.fault is not None and restart.fault.startswith(reached)
    assert restart.fault != reached and "\n" not in restart.fault
    assert later.fault == f"server 'faulty' is down (restart failed): {restart.fault}"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_http_hang_times_out_and_is_cancelled_on_the_server(
    transport: str, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    with http_server([str(SERVERS / "faulty.py")], transport=transport,
                     env={"FAULTY_MARKER": str(marker)}) as url:
        server = HttpServer(name="faulty", url=url, transport="sse" if transport == "sse" else "http")
        async with ToolHub([server], call_timeout=1.0) as hub:
            pid = (await hub.call("faulty__pid", {}, "en")).text
            started = time.monotonic()
            with anyio.fail_after(120):  # a guard against a hang, not a speed check
                hung = await hub.call("faulty__hang", {}, "en")
            waited = time.monotonic() - started
            with anyio.fail_after(120):
                while not marker.exists():  # noqa: ASYNC110 - another process writes the file
                    await anyio.sleep(0.02)
            again = await hub.call("faulty__pid", {}, "en")
    assert hung.fault == "server 'faulty' did not answer 'hang' within 1 s; the call was cancelled"
    assert waited >= 0.9  # the timeout, not an answer (the fault names it)
    assert marker.read_text() == "cancelled"
    assert again == ToolOutput(text=pid)


@pytest.mark.parametrize(("transport", "path"), [("http", "mcp"), ("sse", "sse")])
async def test_an_http_error_at_the_endpoint_is_named_with_its_status(
    transport: str, path: str
) -> None:
    with http_server([str(SERVERS / "faulty.py")], transport=transport) as url:
        wrong = url.replace(f"/{path}", "/nope")
        server = HttpServer(name="faulty", url=wrong, transport="sse" if transport == "sse" else "http")
        async with ToolHub([server]) as hub:
            faults = dict(hub.start_faults)
    assert list(faults) == ["faulty"]
    fault = faults["faulty"]
    assert "\n" not in fault
    if transport == "http":  # refused as streamable HTTP, then tried over HTTP+SSE
        handshake, _, fault = fault.partition("; over HTTP+SSE too: ")
        assert handshake.startswith("server 'faulty' failed the MCP handshake: ")
    reached = f"server 'faulty' could not be reached at {wrong}: "
    assert fault.startswith(reached)
    assert "404" in fault.removeprefix(reached).replace(wrong, "")  # the client's words, the status


async def test_an_sse_message_endpoint_that_fails_is_named_and_does_not_hang() -> None:
    with http_server([str(SERVERS / "sse_broken.py")], transport="sse") as url:
        async with ToolHub([sse("broken", url)], start_timeout=10.0) as hub:
            faults = dict(hub.start_faults)
    assert faults == {
        "broken": f"server 'broken' could not be reached at {url}: "
        "the message endpoint answered HTTP 500"
    }


async def test_an_sse_url_that_is_not_listening_is_unreachable() -> None:
    url = f"http://127.0.0.1:{free_port()}/sse"
    async with ToolHub([sse("far", url)]) as hub:
        faults = dict(hub.start_faults)
    reached = f"server 'far' could not be reached at {url}: "  # then the client's reason
    assert list(faults) == ["far"]
    assert faults["far"].startswith(reached) and faults["far"] != reached
    assert "\n" not in faults["far"]


async def test_a_url_of_the_older_transport_falls_back_from_streamable_http_to_sse(
    sse_url: str, legacy_url: str,
) -> None:
    # Configured as streamable HTTP (the default for a bare "url"), served over HTTP+SSE: the
    # handshake's POST gets a 4xx, and the same URL is tried over HTTP+SSE.
    async with ToolHub([http("old", sse_url), http("new", legacy_url)]) as hub:
        assert hub.start_faults == {}
        assert hub.transports() == {"old": "sse", "new": "http"}
        output = await hub.call("old__text_only", {}, "en")
    assert (output.text, output.fault) == ("line one\nline two", None)
