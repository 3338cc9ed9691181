"""What a gateway client gets is exactly what the record says it got, on every path MCP content
takes through the gateway: tool results with images for one audience, images in embedded blobs,
resource reads and prompts — with the official SDK client as Claude Code and Claude Desktop in
front, and real servers behind (server-everything, a server of every block kind, the screenshot
server). Each call's images, as the client decoded them, are the digests `ResultSent` names, the
audit lists, and `replay --verify` re-derives."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from click.testing import CliRunner
from mcp.shared.exceptions import MCPError
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from fuseforks.cli import main
from fuseforks.events.types import ImagesNormalized, ResultSent, ToolCalled, ToolResultRecorded
from tests.gateway.conftest import (
    blocks,
    recorded,
    shots,
    stdio_gateway,
    write_config,
)
from tests.gateway.pictures import SCREEN_SIZE, small_jpeg
from tests.helpers import npm
from tests.helpers.results import pictures_of
from tests.helpers.results import pixel_size as size

CLAUDE_CODE_CHARS = 25_000 * 4  # its token limit, four characters a token, base64 as text


def digests(pictures: list[bytes]) -> list[str]:
    return [hashlib.sha256(data).hexdigest() for data in pictures]


def wire_size(result: Any) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


def texts(result: CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


async def agree(db: Path, received: list[list[str]]) -> list[ResultSent]:
    """The record, the audit and replay agree with what the client received, call by call."""
    [session] = recorded(db)
    sent = [e.event for e in session if isinstance(e.event, ResultSent)]
    assert [s.images for s in sent] == received
    runner = CliRunner()
    audit = runner.invoke(main, ["audit", str(db), "--json"])
    assert audit.exit_code == 0, audit.output
    rows = json.loads(audit.stdout).get("client_deliveries", [])
    assert [r["digest"] for r in rows] == [d for call in received for d in call]
    replayed = await anyio.to_thread.run_sync(runner.invoke, main,
                                              ["replay", str(db), "--verify"])
    assert replayed.exit_code == 0, replayed.output
    assert replayed.stdout.splitlines()[-1].startswith("  verify: identical (")
    return sent


@pytest.mark.parametrize("client", ["claude-code", "claude-ai"])
async def test_an_image_for_the_user_beside_one_for_the_model_reaches_the_client(
        tmp_path: Path, client: str) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             client=client) as session:
        result = await session.call_tool("blocks__annotated", {})
    assert not result.is_error
    assert [type(b).__name__ for b in result.content] == ["TextContent", "ImageContent",
                                                          "ImageContent"]
    user, assistant = result.content[1:]
    assert isinstance(user, ImageContent) and isinstance(assistant, ImageContent)
    assert user.annotations is not None and user.annotations.audience == ["user"]
    assert assistant.annotations is not None and assistant.annotations.audience == ["assistant"]
    await agree(db, [digests(pictures_of(result.content))])


async def test_server_everythings_annotated_image_reaches_the_client(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, everything=npm.everything()),
                             "--db", str(db), client="claude-code") as session:
        result = await session.call_tool("everything__get-annotated-message",
                                         {"messageType": "success", "includeImage": True})
    assert not result.is_error
    assert [type(b).__name__ for b in result.content] == ["TextContent", "ImageContent"]
    await agree(db, [digests(pictures_of(result.content))])


async def test_an_image_in_an_embedded_blob_fits_claude_codes_budget(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             client="claude-code") as session:
        result = await session.call_tool("blocks__photo_blob", {})
    [picture] = pictures_of(result.content)
    assert max(size(picture)) <= 1568
    assert wire_size(result) <= CLAUDE_CODE_CHARS
    [_, blob] = result.content[:2]
    assert isinstance(blob, EmbeddedResource) and isinstance(blob.resource, BlobResourceContents)
    assert str(blob.resource.uri) == "pictures://photo.png"
    assert blob.resource.mime_type in ("image/jpeg", "image/webp", "image/png")
    assert not any("was not sent" in text for text in texts(result))
    await agree(db, [digests([picture])])


async def test_a_resource_read_through_the_gateway_is_normalized_and_recorded(
        tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             client="claude-code") as session:
        await session.list_resources()
        read = await session.read_resource("pictures://photo.png")
        notes = await session.read_resource("pictures://notes.txt")
    blob = read.contents[0]
    assert isinstance(blob, BlobResourceContents)
    picture = base64.b64decode(blob.blob)
    assert max(size(picture)) <= 1568
    assert wire_size(read) <= CLAUDE_CODE_CHARS
    assert notes.contents == [TextResourceContents(uri="pictures://notes.txt",
                                                   mime_type="text/plain", text="some notes")]
    sent = await agree(db, [digests([picture]), []])
    assert [(s.method, s.name, s.server) for s in sent] == [
        ("resources/read", "pictures://photo.png", "blocks"),
        ("resources/read", "pictures://notes.txt", "blocks")]
    [session_record] = recorded(db)
    called = [e.event for e in session_record if isinstance(e.event, ToolCalled)]
    assert [c.method for c in called] == ["resources/read", "resources/read"]


async def test_a_prompt_with_an_image_is_normalized_and_recorded(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             client="claude-ai") as session:
        await session.list_prompts()
        prompt = await session.get_prompt("blocks__look")
    assert [m.role for m in prompt.messages] == ["user", "user", "user"]
    text, image, note = (m.content for m in prompt.messages)
    assert text == TextContent(type="text", text="What does this photo show?")
    assert isinstance(image, ImageContent)
    picture = base64.b64decode(image.data)
    assert size(picture) == (1568, 1176)
    assert note == TextContent(type="text",
                               text="(image 1: 4000×3000, sent at 1568×1176 (×0.39))")
    sent = await agree(db, [digests([picture])])
    assert [(s.method, s.name) for s in sent] == [("prompts/get", "blocks__look")]


async def test_a_scaled_screenshot_says_its_source_size_and_the_record_keeps_it(
        tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, shots=shots()), "--db", str(db),
                             client="claude-code") as session:
        result = await session.call_tool("shots__screen", {})
    [picture] = pictures_of(result.content)
    width, height = size(picture)
    # the edge's size: under the token budget it lost quality, not pixels
    assert (width, height) == (1568, 882)
    factor = width / SCREEN_SIZE[0]
    assert texts(result) == ["4K screen", f"(image 1: 3840×2160, sent at {width}×{height}"
                                          f" (×{factor:.2f}))"]
    [session_record] = recorded(db)
    [normalized] = [e.event for e in session_record if isinstance(e.event, ImagesNormalized)]
    [meta] = normalized.images
    assert (meta.source_width, meta.source_height, meta.width, meta.height) == (
        *SCREEN_SIZE, width, height)
    await agree(db, [digests([picture])])
    shown = CliRunner().invoke(main, ["replay", str(db)])
    assert re.search(r"re_encoded from PNG 3840x2160\)", shown.stdout), shown.stdout


async def test_every_kind_of_block_through_the_gateway(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             client="claude-code") as session:
        result = await session.call_tool("blocks__every_kind", {})
    kinds = [type(b).__name__ for b in result.content]
    assert kinds == ["TextContent", "ImageContent", "AudioContent", "EmbeddedResource",
                     "EmbeddedResource", "EmbeddedResource", "ResourceLink", "EmbeddedResource",
                     "TextContent"]  # the broken image left out, the notes last
    assert texts(result)[-1] == "(image 2 was not sent: it could not be read)"
    await agree(db, [digests(pictures_of(result.content))])
    assert len(pictures_of(result.content)) == 2


async def test_server_everythings_resources_and_prompts_through_the_gateway(
        tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, everything=npm.everything()),
                             "--db", str(db), client="claude-ai") as session:
        await session.list_resource_templates()
        text = await session.read_resource("demo://resource/dynamic/text/1")
        blob = await session.read_resource("demo://resource/dynamic/blob/2")
        await session.list_prompts()
        prompt = await session.get_prompt("everything__resource-prompt",
                                          {"resourceType": "Blob", "resourceId": "3"})
        with pytest.raises(MCPError) as refused:  # the server's own refusal, handed on
            await session.get_prompt("everything__resource-prompt",
                                     {"resourceType": "Video", "resourceId": "3"})
    [first] = text.contents
    assert isinstance(first, TextResourceContents) and first.text.startswith("Resource 1:")
    [second] = blob.contents
    assert isinstance(second, BlobResourceContents)
    assert base64.b64decode(second.blob).startswith(b"Resource 2:")
    assert [type(m.content).__name__ for m in prompt.messages] == ["TextContent",
                                                                   "EmbeddedResource"]
    assert "Invalid resourceType: Video" in refused.value.error.message
    sent = await agree(db, [[], [], [], []])
    assert [s.method for s in sent] == ["resources/read", "resources/read", "prompts/get",
                                        "prompts/get"]
    [session_record] = recorded(db)
    [*_, refusal] = [e.event for e in session_record if isinstance(e.event, ToolResultRecorded)]
    assert refusal.ok is False and refusal.fault is not None
    assert "Invalid resourceType: Video" in refusal.fault


SCALED_PARTS = ("(image 1: 1280×1500, sent at 886×1038 (×0.69))\n"
                "(image 2: 1280×1500, sent at 886×1038 (×0.69))")


@pytest.mark.parametrize(("client", "parts", "notes"), [
    ("claude-ai", [(1280, 1500), (1280, 1500)], []),
    ("an-agent-of-its-own", [(1280, 1500), (1280, 1500)], []),
    # within its token budget: down to the size where the text still reads, no further
    ("claude-code", [(886, 1038), (886, 1038)], [SCALED_PARTS]),
])
async def test_a_full_page_reaches_the_client_in_parts_and_the_record_agrees(
        tmp_path: Path, client: str, parts: list[tuple[int, int]], notes: list[str]) -> None:
    """At 1568 px a 1280x3000 page's text is 8 px high, past reading: the page goes as parts of a
    screen's shape, its text as drawn, after a note that they are one page."""
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             client=client) as session:
        result = await session.call_tool("blocks__full_page", {})
    assert [type(b).__name__ for b in result.content][:5] == [
        "TextContent", "TextContent", "ImageContent", "ImageContent", "ImageContent"]
    assert texts(result) == [
        "the page", "(the next 2 images are one 1280×3000 page, cut from top to bottom)", *notes]
    pictures = pictures_of(result.content)
    assert [size(p) for p in pictures] == [*parts, (640, 400)]
    assert pictures[2] == small_jpeg()  # the photo beside it keeps its place and its bytes
    await agree(db, [digests(pictures)])


async def test_a_profile_of_api_limits_only_sends_a_page_whole(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    async with stdio_gateway(write_config(tmp_path, blocks=blocks()), "--db", str(db),
                             "--profile", "api-limits", client="claude-code") as session:
        result = await session.call_tool("blocks__full_page", {})
    assert texts(result) == ["the page"]
    assert [size(p) for p in pictures_of(result.content)] == [(1280, 3000), (640, 400)]
