"""The gateway with servers other people wrote behind it and the official SDK client in front:
the demo camera, `@modelcontextprotocol/server-everything` (a tiny image, an image for the user
alone) and `@playwright/mcp` driving the distribution's Chromium for a full-page screenshot of a
long local page — as `claude-code`, as `claude-ai` (Claude Desktop) and as a client the gateway
does not know. Each gets every image within its profile's long edge and every result within its
profile's budget (docs/gateway.md, "Client profiles"), and the record — the session, the images
it normalized, what it sent, the audit, replay — says exactly what the client decoded."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import anyio.to_thread
import pytest
from click.testing import CliRunner
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

from fuseforks.cli import main
from fuseforks.core.media import MEDIA_TYPES
from fuseforks.demo.camera import render_frame
from fuseforks.events.types import ImagesNormalized, ResultSent, SessionStarted
from tests.gateway.conftest import camera, recorded, stdio_gateway, write_config
from tests.helpers import npm
from tests.helpers.results import pictures_of

PAGE_WIDTH, PAGE_HEIGHT = 1280, 3000
LONG_EDGE = 1568
IMAGE_RULES_IMAGE_BYTES = 2 * 1024 * 1024


class Expected(NamedTuple):
    """What a client's profile promises it (docs/gateway.md's table)."""

    profile: str
    budget: int | None
    """Characters of JSON a whole result may take; None: no limit."""
    part: tuple[int, int]
    """The size each half of the full page is sent at."""


CLIENTS = {
    "claude-code": Expected("claude-code", 25_000 * 4, (823, 964)),  # tokens of four characters
    "claude-ai": Expected("claude-desktop", 1_000_000, (1280, 1500)),
    "an-agent-of-its-own": Expected("image-rules", None, (1280, 1500)),
}


def long_page() -> str:
    """A page of text exactly PAGE_WIDTH x PAGE_HEIGHT CSS pixels, in many colours."""
    lines = "".join(
        f"<p style='color:hsl({line * 37 % 360},70%,35%)'>Line {line}: the quick brown fox "
        f"jumps over the lazy dog, {line * 7919} times.</p>" for line in range(150))
    return ("<!doctype html><html><head><title>a long page</title><style>"
            f"html,body{{margin:0}} main{{width:{PAGE_WIDTH}px;height:{PAGE_HEIGHT}px;"
            "overflow:hidden;font:16px sans-serif}</style></head>"
            f"<body><main>{lines}</main></body></html>")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The long page, served over HTTP on a port of 127.0.0.1 the system chose."""
    site = tmp_path_factory.mktemp("site")
    (site / "long.html").write_text(long_page())
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/long.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def decoded(data: bytes) -> tuple[str, tuple[int, int]]:
    """The media type and size of a picture as its reader decodes it."""
    with Image.open(io.BytesIO(data)) as opened:
        return MEDIA_TYPES[str(opened.format)], opened.size


def wire_size(result: CallToolResult) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


def texts(result: CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_real_servers_through_the_gateway_give_each_client_what_its_profile_allows(
        tmp_path: Path, page_url: str, client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAX_MCP_OUTPUT_TOKENS", raising=False)  # Claude Code's default limit
    expected = CLIENTS[client]
    shots = tmp_path / "playwright"
    shots.mkdir()
    browser = npm.playwright(shots)
    browser["args"] = [*browser["args"], "--viewport-size", f"{PAGE_WIDTH}x720"]
    config = write_config(tmp_path, camera=camera(), everything=npm.everything(),
                          browser=browser)
    db = tmp_path / "g.db"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("camera__live_view_image", {}),
        ("everything__get-tiny-image", {}),
        ("everything__get-annotated-message", {"messageType": "success", "includeImage": True}),
        ("browser__browser_navigate", {"url": page_url}),
        ("browser__browser_take_screenshot", {"fullPage": True, "type": "png", "scale": "css"}),
    ]
    results: list[CallToolResult] = []
    async with stdio_gateway(config, "--db", str(db), client=client) as session:
        for name, arguments in calls:
            results.append(await session.call_tool(name, arguments))
    assert [r.is_error for r in results] == [False] * len(calls)
    pictures = [pictures_of(r.content) for r in results]
    assert [len(p) for p in pictures] == [1, 1, 1, 0, 2]

    # what the client got: every image within the long edge, every result within the budget
    for result, found in zip(results, pictures, strict=True):
        for picture in found:
            assert max(decoded(picture)[1]) <= LONG_EDGE
            if expected.budget is None:
                assert len(picture) <= IMAGE_RULES_IMAGE_BYTES
        if expected.budget is not None:
            assert wire_size(result) <= expected.budget
    [[frame], [tiny], [annotated], [], parts] = pictures
    assert frame == render_frame(1)  # within every profile: the camera's own bytes
    assert decoded(tiny)[1] == decoded(annotated)[1] == (20, 20)
    [annotated_block] = [b for b in results[2].content if isinstance(b, ImageContent)]
    assert annotated_block.annotations is not None
    assert annotated_block.annotations.audience == ["user"]
    # at 1568 px the full page's text would be 8 px high: it goes as two parts of a screen's
    # shape, at their own size where the budget allows, else down to where the text still reads
    assert [decoded(p)[1] for p in parts] == [expected.part] * 2
    assert texts(results[4])[1] == (
        f"(the next 2 images are one {PAGE_WIDTH}×{PAGE_HEIGHT} page, cut from top to bottom)")

    # what the record says the client got: the same images, byte for byte, with their types
    [recording] = recorded(db)
    events = [e.event for e in recording]
    [started] = [e for e in events if isinstance(e, SessionStarted)]
    assert (started.client, started.profile) == (client, expected.profile)
    sent = [e for e in events if isinstance(e, ResultSent)]
    assert [(s.name, s.images) for s in sent] == [
        (name, [hashlib.sha256(p).hexdigest() for p in found])
        for (name, _), found in zip(calls, pictures, strict=True)]
    metas = {m.digest: m for e in events if isinstance(e, ImagesNormalized) for m in e.images}
    for picture in [frame, tiny, *parts]:
        meta = metas[hashlib.sha256(picture).hexdigest()]
        media_type, (w, h) = decoded(picture)
        assert (meta.media_type, meta.width, meta.height, meta.size) == (
            media_type, w, h, len(picture))
    assert [(metas[hashlib.sha256(part).hexdigest()].source_width,
             metas[hashlib.sha256(part).hexdigest()].source_height) for part in parts] == [
        (PAGE_WIDTH, PAGE_HEIGHT // 2)] * 2
    runner = CliRunner()
    audit = runner.invoke(main, ["audit", str(db), "--client", client, "--json"])
    assert audit.exit_code == 0, audit.output
    assert [(row["tool"], row["digest"]) for row in json.loads(audit.stdout)["client_deliveries"]
            ] == [(name, hashlib.sha256(p).hexdigest())
                  for (name, _), found in zip(calls, pictures, strict=True) for p in found]
    replayed = await anyio.to_thread.run_sync(runner.invoke, main, ["replay", str(db), "--verify"])
    assert replayed.exit_code == 0, replayed.output
    assert replayed.stdout.splitlines()[-1].startswith("  verify: identical (")
