"""Each MCP client fuseforks knows, as it calls itself in `initialize`, through a real gateway
over stdio: the profile `auto` picks for it, what it receives of an image over the engine's long
edge and of one within it (size, type, bytes), and the reshaping of a client whose quirk the
gateway works around — all as the record says it was sent.

Where each name and each quirk comes from: docs/gateway.md, "Clients by name"."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from mcp.types import ImageContent, TextContent

from fuseforks.events.types import ResultSent, SessionStarted, ToolResultRecorded
from fuseforks.gateway.profiles import CLIENT_PROFILES
from tests.gateway.conftest import blocks, recorded, stdio_gateway, write_config
from tests.gateway.pictures import small_jpeg
from tests.helpers.results import images_with_types as images
from tests.helpers.results import pixel_size as size

ENGINE_BYTES = 2 * 1024 * 1024

CLIENTS = [
    # (the name the client sends, the profile auto picks)
    ("cursor-vscode", "image-rules"),
    ("gemini-cli-mcp-client", "image-rules"),
    ("Zed", "image-rules"),
    ("continue-client", "image-rules"),
    ("Cline", "image-rules"),
    ("@cline/core", "image-rules"),
    ("goose", "image-rules"),
    ("@librechat/api-client", "image-rules"),
    ("Visual Studio Code", "vscode"),
    ("Visual Studio Code - Insiders", "vscode"),
    ("Code - OSS", "vscode"),
    ("windsurf-client", "image-rules"),
    ("codex-mcp-client", "structured-first"),
    ("opencode", "structured-first"),
]

UNKNOWN = [
    # a name no source gave: any client the gateway does not know gets the engine's rules
    ("some-other-client", "image-rules"),
]


def test_every_known_client_is_tested_and_every_tested_name_is_known() -> None:
    assert dict(CLIENTS) == {name: profile for name, profile in CLIENT_PROFILES.items()
                             if not name.startswith("claude-")}
    assert not any(name in CLIENT_PROFILES for name, _ in UNKNOWN)


@pytest.mark.parametrize(("client", "profile"), CLIENTS + UNKNOWN)
async def test_a_client_gets_its_profile_and_images_within_it_and_its_quirk_worked_around(
        tmp_path: Path, client: str, profile: str) -> None:
    config = write_config(tmp_path, blocks=blocks())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), client=client, version="9.9") as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        photo = await session.call_tool("blocks__big_photo", {})
        measured = await session.call_tool("blocks__measured", {})
        counted = await session.call_tool("blocks__counted", {})
    # the engine's own rules: a 3136x1960 photo scaled to 1568 px (VS Code: to a 768 px short
    # edge, as it would scale it itself), as JPEG, within 2 MiB
    [(data, media_type)] = images(photo)
    edge = (1229, 768) if profile == "vscode" else (1568, 980)
    assert (size(data), media_type) == (edge, "image/jpeg")
    assert len(data) <= ENGINE_BYTES
    assert images(measured) == [(small_jpeg(), "image/jpeg")]  # within them: as it came
    # a result without images keeps its structured content, whatever the client
    assert counted.structured_content == {"width": 3, "height": 2}
    if profile == "structured-first":
        # the client would read the structured content alone and lose the image: none is sent
        # with an image, its JSON follows as text; no output schema is offered, or the client's
        # SDK would refuse a result without structured content
        assert measured.structured_content is None
        assert [(type(b), getattr(b, "text", None)) for b in measured.content] == [
            (TextContent, "a photo"), (ImageContent, None),
            (TextContent, json.dumps({"width": 640, "height": 400}))]
        assert listed["blocks__measured"].output_schema is None
        body = 'a photo\n{"width": 640, "height": 400}'
    else:
        assert measured.structured_content == {"width": 640, "height": 400}
        assert [type(b) for b in measured.content] == [TextContent, ImageContent]
        assert listed["blocks__measured"].output_schema is not None
        body = "a photo"

    [run] = recorded(db)
    started = run[0].event
    assert isinstance(started, SessionStarted)
    assert (started.client, started.client_version, started.profile) == (client, "9.9", profile)
    assert (started.limits.max_edge_px, started.limits.max_bytes, started.limits.max_images,
            started.limits.shrink) == (1568, ENGINE_BYTES, 4, True)
    assert (started.limits.max_short_edge_px, started.limits.webp) == (
        (768, False) if profile == "vscode" else (0, True))
    # the record says what the client got: the images' digests, the text it read
    sent = [e.event.images for e in run if isinstance(e.event, ResultSent)]
    assert sent == [[hashlib.sha256(data).hexdigest()],
                    [hashlib.sha256(small_jpeg()).hexdigest()], []]
    bodies = [e.event.body for e in run if isinstance(e.event, ToolResultRecorded)]
    assert bodies[1] == body


@pytest.mark.parametrize("client", ["Visual Studio Code", "Code - OSS"])
async def test_vs_code_gets_no_webp_and_images_it_will_not_scale_again(
        tmp_path: Path, client: str) -> None:
    """VS Code scales an image with both sides over 768 px to a 768 px short side, and sends a
    scaled image that is not JPEG as PNG bytes under the server's type: a WebP would reach the
    model as PNG called WebP, which broke every later request of a conversation. The gateway
    sends it PNG or JPEG, already at that size."""
    config = write_config(tmp_path, blocks=blocks())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), client=client) as session:
        screens = await session.call_tool("blocks__ui_screens", {})
        photo = await session.call_tool("blocks__big_photo", {})
    [(ui, ui_type), (shot, shot_type)] = images(screens)
    assert (size(ui), ui_type, ui[:8]) == ((1229, 768), "image/png", b"\x89PNG\r\n\x1a\n")
    assert (size(shot), shot_type, shot[:8]) == ((1229, 768), "image/png", b"\x89PNG\r\n\x1a\n")
    [(data, media_type)] = images(photo)
    assert (size(data), media_type, data[:2]) == ((1229, 768), "image/jpeg", b"\xff\xd8")
    [run] = recorded(db)
    started = run[0].event
    assert isinstance(started, SessionStarted)
    assert (started.profile, started.limits.max_short_edge_px, started.limits.webp) == (
        "vscode", 768, False)
    sent = [e.event.images for e in run if isinstance(e.event, ResultSent)]
    assert sent == [[hashlib.sha256(ui).hexdigest(), hashlib.sha256(shot).hexdigest()],
                    [hashlib.sha256(data).hexdigest()]]
