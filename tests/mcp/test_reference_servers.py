"""Every kind of content as servers nobody here wrote send it: the npm reference servers
`@modelcontextprotocol/server-filesystem` (`read_media_file`) and
`@modelcontextprotocol/server-everything` (resource links, annotations, progress, and its older
HTTP+SSE transport behind a bare `url`), installed by `make test` (`tests/helpers/npm.py`)."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from PIL import Image

from fuseforks.mcp import HttpServer, StdioServer, ToolHub
from tests.helpers import processes
from tests.helpers.ports import free_port
from tests.mcp.conftest import hosted_hub, wait_listening

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("files")
    frames = [Image.new("RGB", (30, 20), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    frames[0].save(root / "anim.gif", save_all=True, append_images=frames[1:], duration=100,
                   loop=0)
    Image.new("RGB", (24, 16), (0, 0, 255)).save(root / "blue.bmp")
    (root / "notes.json").write_text('{"focus": "locked"}')
    return root


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub(reference_bin: Path, files: Path) -> AsyncIterator[ToolHub]:
    servers = [
        StdioServer(name="fs", command=str(reference_bin / "mcp-server-filesystem"),
                    args=[str(files)]),
        StdioServer(name="ev", command=str(reference_bin / "mcp-server-everything"),
                    args=["stdio"]),
    ]
    async with hosted_hub(ToolHub(servers, start_timeout=60)) as shared:
        yield shared


async def test_read_media_file_of_an_animated_gif(hub: ToolHub, files: Path) -> None:
    output = await hub.call("fs__read_media_file", {"path": str(files / "anim.gif")}, "en")
    assert output.text == "(1 image)\n(image 1 is the first frame of an animation of 3 frames)"
    (image,) = output.images
    assert (image.source_format, image.frames, image.width, image.height) == ("GIF", 3, 30, 20)
    assert Image.open(io.BytesIO(image.data)).convert("RGB").getpixel((15, 10)) == (255, 0, 0)


async def test_read_media_file_of_a_bmp(hub: ToolHub, files: Path) -> None:
    output = await hub.call("fs__read_media_file", {"path": str(files / "blue.bmp")}, "en")
    assert [(i.source_format, i.width, i.height) for i in output.images] == [("BMP", 24, 16)]


async def test_read_media_file_of_json_is_its_text(hub: ToolHub, files: Path) -> None:
    # The server sends every non-media file as an application/octet-stream blob.
    output = await hub.call("fs__read_media_file", {"path": str(files / "notes.json")}, "en")
    assert output.text == f'[resource file://{files}/notes.json]\n{{"focus": "locked"}}'


async def test_resource_links_are_read_from_the_server(hub: ToolHub) -> None:
    output = await hub.call("ev__get-resource-links", {"count": 2}, "en")
    lines = output.text.splitlines()
    assert lines[1] == ("[resource link demo://resource/dynamic/blob/1] Blob Resource 1 "
                        "(text/plain): Resource 1: plaintext resource")
    assert lines[2] == "[resource demo://resource/dynamic/blob/1]"
    assert lines[3].startswith("Resource 1: This is a base64 blob created at ")
    assert [(r.uri, r.outcome) for r in output.reads] == [
        ("demo://resource/dynamic/blob/1", "read"), ("demo://resource/dynamic/text/2", "read")]
    assert all(r.digest is not None and r.size > 0 for r in output.reads)


async def test_annotated_content_goes_to_its_audience(hub: ToolHub) -> None:
    output = await hub.call("ev__get-annotated-message",
                            {"messageType": "debug", "includeImage": True}, "en")
    assert output.text == "Debug: Cache hit ratio 0.95, latency 150ms"
    assert output.images == []
    assert output.shown == "(an image meant for the user; it was not sent to the model)"


async def test_progress_of_a_long_running_operation_is_heard(hub: ToolHub) -> None:
    heard: list[tuple[str, float, float | None]] = []
    hub.on_progress = lambda tool, progress, total, message: heard.append((tool, progress, total))
    try:
        output = await hub.call("ev__trigger-long-running-operation",
                                {"duration": 0.3, "steps": 3}, "en")
    finally:
        hub.on_progress = None
    assert output.text.startswith("Long running operation completed.")
    assert heard == [("ev__trigger-long-running-operation", float(n), 3.0) for n in (1, 2, 3)]


@pytest.fixture(scope="module")
def everything_sse(reference_bin: Path) -> Iterator[str]:
    port = free_port()
    process = processes.spawn([str(reference_bin / "mcp-server-everything"), "sse"],
                              env={**os.environ, "PORT": str(port)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(process, port, 60, "mcp-server-everything")
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_bare_url_to_an_sse_server_falls_back_and_works(everything_sse: str) -> None:
    async with ToolHub([HttpServer(name="ev", url=everything_sse)], start_timeout=60) as hub:
        assert (hub.start_faults, hub.transports()) == ({}, {"ev": "sse"})
        output = await hub.call("ev__echo", {"message": "over SSE"}, "en")
    assert output.text == "Echo: over SSE"
