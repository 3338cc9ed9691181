"""Client profiles as data, tool names for the client, and the reply built from a server's
result: the gateway's pure parts, one function at a time."""

from __future__ import annotations

import base64
import hashlib

import pytest
from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.gateway.names import Names
from fuseforks.gateway.profiles import LimitOverrides, profile_for
from fuseforks.mcp.reply import (
    content_over_structured,
    plan_for_client,
    render_reply,
    reply_size,
)
from tests.helpers import imagegen as gen

# A photo as an RGBA PNG: re-encoded (a PNG with an alpha channel never passes through), as JPEG.
B64_PNG = base64.b64encode(gen.encode(gen.photo(300, 200, mode="RGBA"), "PNG")).decode()


@pytest.mark.parametrize(("profile", "client", "name", "edge", "size", "result"), [
    ("auto", "claude-ai", "claude-desktop", 1568, 3_932_160, ResultLimits(max_bytes=1_000_000)),
    ("auto", "claude-code", "claude-code", 1568, 3_932_160, ResultLimits(max_tokens=25_000)),
    # a client the gateway knows with no limit of its own found: the engine's own limits
    ("auto", "cursor-vscode", "image-rules", 1568, 2_097_152, ResultLimits()),
    ("auto", "gemini-cli-mcp-client", "image-rules", 1568, 2_097_152, ResultLimits()),
    # clients that read structuredContent alone: the engine's limits, images kept from hiding
    ("auto", "codex-mcp-client", "structured-first", 1568, 2_097_152, ResultLimits()),
    ("auto", "opencode", "structured-first", 1568, 2_097_152, ResultLimits()),
    ("structured-first", "claude-ai", "structured-first", 1568, 2_097_152, ResultLimits()),
    # a client the gateway does not know: the engine's own limits, as a turn sends images
    ("auto", "some-new-client", "image-rules", 1568, 2_097_152, ResultLimits()),
    ("image-rules", "claude-code", "image-rules", 1568, 2_097_152, ResultLimits()),
    ("many-images", "claude-ai", "many-images", 2000, 3_932_160, ResultLimits()),
    ("api-limits", "claude-code", "api-limits", 8000, 3_932_160, ResultLimits()),
    ("generic", "claude-code", "api-limits", 8000, 3_932_160, ResultLimits()),  # its old name
])
def test_a_profile_is_chosen_by_name_or_by_the_client(profile: str, client: str, name: str,
                                                      edge: int, size: int,
                                                      result: ResultLimits) -> None:
    chosen = profile_for(profile, client, environ={})
    assert (chosen.name, chosen.limits.max_edge_px, chosen.result_limits) == (name, edge, result)
    assert (chosen.limits.max_bytes, chosen.limits.max_images, chosen.limits.shrink) == (
        size, 4, True)


@pytest.mark.parametrize(("client", "first"), [("codex-mcp-client", True), ("opencode", True),
                                               ("claude-code", False), ("Zed", False)])
def test_only_clients_that_read_structured_content_alone_have_it_moved(client: str,
                                                                       first: bool) -> None:
    assert profile_for("auto", client, environ={}).structured_first is first


def test_structured_content_moves_to_text_once() -> None:
    image = ImageContent(type="image", data=B64_PNG, mime_type="image/png")
    moved = content_over_structured(CallToolResult(
        content=[TextContent(type="text", text="not json"), image],
        structured_content={"n": 1, "name": "ü"}))
    assert moved.structured_content is None
    assert moved.content == [TextContent(type="text", text="not json"), image,
                             TextContent(type="text", text='{"n": 1, "name": "ü"}')]
    # a server that sent the JSON as text too, as the specification asks: not sent twice
    said = CallToolResult(content=[TextContent(type="text", text='{"name":"ü", "n":1}'), image],
                          structured_content={"n": 1, "name": "ü"})
    assert content_over_structured(said).content == said.content
    assert content_over_structured(said).structured_content is None


def test_claude_codes_token_limit_follows_its_environment_variable() -> None:
    assert profile_for("claude-code", "x", environ={"MAX_MCP_OUTPUT_TOKENS": "50000"}
                       ).result_limits == ResultLimits(max_tokens=50_000)
    assert profile_for("claude-code", "x", environ={"MAX_MCP_OUTPUT_TOKENS": "lots"}
                       ).result_limits == ResultLimits(max_tokens=25_000)


def test_every_limit_can_be_set_over_the_profile() -> None:
    chosen = profile_for("claude-desktop", "x", LimitOverrides(
        max_edge_px=1000, max_bytes=500_000, max_images=2, result_max_bytes=300_000,
        result_max_tokens=40_000), environ={})
    assert chosen.limits == ImageLimits(max_edge_px=1000, max_bytes=500_000, max_images=2,
                                        shrink=True, split_pages=True)
    assert chosen.result_limits == ResultLimits(max_bytes=300_000, max_tokens=40_000)
    assert chosen.result_limits.budget() == 160_000  # 40,000 tokens of four characters
    with pytest.raises(ValueError, match="unknown profile 'desktop'"):
        profile_for("desktop", "x")


def test_plain_names_keep_their_prefix_where_two_servers_share_one() -> None:
    listed = [("cam__shot", "shot"), ("web__shot", "shot"), ("web__open", "open")]
    plain = Names(listed, "plain")
    assert [plain.exposed(p) for p, _ in listed] == ["cam__shot", "web__shot", "open"]
    assert (plain.prefixed("open"), plain.prefixed("web__shot")) == ("web__open", "web__shot")
    prefixed = Names(listed, "prefixed")
    assert [prefixed.exposed(p) for p, _ in listed] == ["cam__shot", "web__shot", "web__open"]
    assert plain.prefixed("nothing") == "nothing"


NO_LIMIT = ResultLimits()
GENERIC = profile_for("api-limits", "x", environ={}).limits


async def test_the_reply_keeps_the_servers_blocks_and_order_and_changes_only_images_and_media_text(
        ) -> None:
    jpeg = gen.jpeg(64, 48)
    jpeg_b64 = base64.b64encode(jpeg).decode()
    dumped = f"see data:image/png;base64,{B64_PNG} here"
    link = ResourceLink(type="resource_link", uri="file:///a.png", name="a")
    audio = AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")
    result = CallToolResult(content=[
        TextContent(type="text", text=dumped),
        ImageContent(type="image", data=B64_PNG, mime_type="image/png"),
        link, audio,
        ImageContent(type="image", data=jpeg_b64, mime_type="image/png"),  # a JPEG, mislabelled
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="file:///n.txt", text=f"data:image/png;base64,{B64_PNG}")),
        ImageContent(type="image", data="not base64!", mime_type="image/png"),
    ], structured_content={"shot": B64_PNG, "n": 1})
    plan = await plan_for_client(result, language="en", limits=GENERIC, result_limits=NO_LIMIT)
    sent = render_reply(plan, keep=2, notes=plan.notes)
    assert isinstance(sent, CallToolResult)
    text, first, kept_link, kept_audio, second, resource, note = sent.content
    assert isinstance(text, TextContent)
    assert text.text == (f"see data:image/png;base64,[base64 omitted: {len(B64_PNG)} characters]"
                         " here")
    assert isinstance(first, ImageContent) and first.mime_type == "image/jpeg"
    assert hashlib.sha256(base64.b64decode(first.data)).hexdigest() == plan.kept[0].digest
    assert (kept_link, kept_audio) == (link, audio)
    assert isinstance(second, ImageContent)
    assert (second.data, second.mime_type) == (jpeg_b64, "image/jpeg")  # the server's own text
    assert isinstance(resource, EmbeddedResource)
    assert isinstance(resource.resource, TextResourceContents)
    assert "[base64 omitted:" in resource.resource.text
    assert note == TextContent(type="text", text="(image 3 was not sent: it could not be read)")
    assert sent.structured_content == {"shot": f"[base64 omitted: {len(B64_PNG)} characters]",
                                       "n": 1}
    capped = render_reply(plan, keep=1, notes=[])
    assert isinstance(capped, CallToolResult)
    assert sum(isinstance(b, ImageContent) for b in capped.content) == 1


async def test_sizes_count_everything_but_the_images_data() -> None:
    result = CallToolResult(content=[TextContent(type="text", text="x" * 1000),
                                     ImageContent(type="image", data=B64_PNG,
                                                  mime_type="image/png")])
    plan = await plan_for_client(result, language="en", limits=GENERIC, result_limits=NO_LIMIT)
    whole = len(render_reply(plan, 1, plan.notes).model_dump_json(
        by_alias=True, exclude_none=True).encode())
    assert plan.bytes_without_images == reply_size(plan)
    assert whole - reply_size(plan) == len(base64.b64encode(plan.kept[0].data))
