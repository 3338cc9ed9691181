"""Generated MCP results shaped like real servers' output, for the properties of the plan.

Random mixes of every block kind — text (some with an image dumped into it as base64), images
in many formats and states (passed through, re-encoded, scaled, animated, unsupported, broken,
lying about their type, declaring a bomb's size), audio, embedded text, embedded blobs (an
image, JSON, a PDF), resource links — each with or without an audience. Strategies give the JSON
a server puts on the wire (`CallToolResult` by alias), so the same value feeds a real server.
"""

from __future__ import annotations

import base64
import functools
import io
import itertools
import re
from typing import Any

from hypothesis import strategies as st
from mcp.types import BlobResourceContents, EmbeddedResource, ImageContent
from PIL import Image

from fuseforks.core.media import ImageLimits
from fuseforks.events.privacy import find_media
from tests.helpers import imagegen as gen


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@functools.cache
def pictures() -> dict[str, tuple[str, str]]:
    """name -> (base64 text, the type a server claims)."""
    gif = gen.encode(gen.photo(80, 60, seed=3), "GIF")
    return {
        "small_jpeg": (b64(gen.jpeg(64, 48)), "image/jpeg"),
        "rgba_png": (b64(gen.encode(gen.photo(300, 200, mode="RGBA", seed=1), "PNG")),
                     "image/png"),
        "screenshot": (b64(gen.encode(gen.desktop_screenshot(2400, 1500, seed=2), "PNG")),
                       "image/png"),
        "page": (b64(gen.encode(gen.screenshot(900, 2200, seed=6)[0], "PNG")), "image/png"),
        "animated_webp": (b64(gen.animated_webp(64, 64, [(255, 0, 0), (0, 0, 255)])),
                          "image/webp"),
        "gif": (b64(gif), "image/gif"),
        "bmp": (b64(gen.encode(gen.photo(40, 30, seed=4), "BMP")), "image/bmp"),
        "jpeg_said_png": (b64(gen.jpeg(96, 64, seed=5)), "image/png"),
        "bomb": (b64(gen.png_declaring(20_000, 10)), "image/png"),
        "psd": (b64(b"8BPS\x00\x01" + bytes(40)), "image/vnd.adobe.photoshop"),
        "random": (b64(bytes(range(256)) * 4), "image/png"),
        "broken": ("not base64 at all!", "image/png"),
    }


SIZES: dict[str, tuple[int, int] | None] = {
    "small_jpeg": (64, 48), "rgba_png": (300, 200), "screenshot": (2400, 1500), "page": (900, 2200),
    "animated_webp": (64, 64), "gif": (80, 60), "bmp": (40, 30), "jpeg_said_png": (96, 64),
    "bomb": None, "psd": None, "random": None, "broken": None,
}
"""Each picture's size as its server sent it (None: not a picture anyone can decode)."""

AUDIENCES = st.sampled_from([None, ["user"], ["assistant"], ["user", "assistant"]])
PICTURE = st.sampled_from(sorted(pictures()))
PDF = b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"


def _annotated(block: dict[str, Any], audience: list[str] | None) -> dict[str, Any]:
    return block if audience is None else {**block, "annotations": {"audience": audience}}


@st.composite
def text_block(draw: st.DrawFn) -> dict[str, Any]:
    words = draw(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]),
                         max_size=40))
    if draw(st.booleans()):  # a server that dumps a picture into its text
        data, mime = pictures()[draw(PICTURE)]
        words = f"{words} data:{mime};base64,{data} {words}"
    return {"type": "text", "text": words}


@st.composite
def image_block(draw: st.DrawFn) -> dict[str, Any]:
    data, mime = pictures()[draw(PICTURE)]
    return {"type": "image", "data": data, "mimeType": mime}


@st.composite
def image_blob(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(PICTURE)
    data, mime = pictures()[name]
    return {"type": "resource", "resource": {"uri": f"pictures://{name}", "mimeType": mime,
                                             "blob": data}}


OTHER_BLOCKS = st.sampled_from([
    {"type": "audio", "data": b64(b"RIFF\x24\x00\x00\x00WAVEfmt "), "mimeType": "audio/wav"},
    {"type": "resource", "resource": {"uri": "notes://a.txt", "mimeType": "text/plain",
                                      "text": "notes"}},
    {"type": "resource", "resource": {"uri": "data://a.json", "mimeType": "application/json",
                                      "blob": b64(b'{"seen": 2}')}},
    {"type": "resource", "resource": {"uri": "data://a.pdf", "mimeType": "application/pdf",
                                      "blob": b64(PDF)}},
    {"type": "resource_link", "uri": "pictures://linked.png", "name": "linked.png",
     "mimeType": "image/png"},
])


@st.composite
def results(draw: st.DrawFn, max_blocks: int = 8) -> dict[str, Any]:
    """One tool result as a server sends it."""
    kinds = st.one_of(text_block(), image_block(), image_blob(), OTHER_BLOCKS)
    content = [_annotated(block, draw(AUDIENCES))
               for block in draw(st.lists(kinds, max_size=max_blocks))]
    return {"content": content, "isError": draw(st.integers(0, 9)) == 0}


def is_image(block: dict[str, Any]) -> bool:
    """A block the image pipeline gets: an image, or a blob that is one by its type."""
    if block["type"] == "image":
        return True
    resource = block.get("resource", {})
    return "blob" in resource and resource.get("mimeType", "").startswith("image/")


def for_user_only(block: dict[str, Any]) -> bool:
    return block.get("annotations", {}).get("audience") == ["user"]


NOT_SENT = re.compile(r"\(image (\d+) was not sent: ")
CAPPED = re.compile(r"\(the last (?:(\d+) images were|image was) not sent: ")


def named_missing(text: str) -> int:
    """How many images a text's notes say were not sent."""
    capped = sum(int(n) if n else 1 for n in CAPPED.findall(text))
    return len(NOT_SENT.findall(text)) + capped


SCALED = re.compile(r"\(image (\d+): (\d+)×(\d+), sent at (\d+)×(\d+) \(×[\d.]+\)\)")


def scale_notes(text: str) -> list[tuple[int, tuple[int, int], tuple[int, int]]]:
    """(image number, source size, sent size) of each note that an image was sent smaller."""
    return [(int(n), (int(sw), int(sh)), (int(w), int(h)))
            for n, sw, sh, w, h in SCALED.findall(text)]


def source_size(block: dict[str, Any]) -> tuple[int, int] | None:
    """The size of the picture a block carries, as its server sent it."""
    data = block.get("data") or block.get("resource", {}).get("blob")
    by_data = {value[0]: name for name, value in pictures().items()}
    return SIZES[by_data[data]] if data in by_data else None


PAGED = re.compile(r"\(the next (\d+) images are one (\d+)×(\d+) page, cut from top to bottom\)")


def recipient_sources(offered: list[dict[str, Any]],
                      texts: list[str]) -> list[tuple[int, int] | None]:
    """The source size of each image the recipient was to get, in order: an offered image's, or,
    for a page its notes say was cut, each part's (cut top to bottom into equal parts)."""
    pages = [(int(n), (int(w), int(h))) for text in texts for n, w, h in PAGED.findall(text)]
    sources: list[tuple[int, int] | None] = []
    for block in offered:
        size = source_size(block)
        if pages and block["type"] == "image" and size == pages[0][1]:
            count, (width, height) = pages.pop(0)
            bounds = [round(height * i / count) for i in range(count + 1)]
            sources.extend((width, bottom - top) for top, bottom in itertools.pairwise(bounds))
        else:
            sources.append(size)
    assert pages == [], pages  # every page a note names was offered
    return sources


def check_scale_notes(sources: list[tuple[int, int] | None], sent: list[tuple[int, int]],
                      texts: list[str]) -> None:
    """Every picture sent at a size no server sent is named by a note with that size, and each
    note names the source size of the image it numbers. `sources`: the source size of each of
    the recipient's images in order (`recipient_sources`; the notes number them from 1)."""
    notes = [note for text in texts for note in scale_notes(text)]
    known = {size for size in [*SIZES.values(), *sources] if size is not None}
    assert {size for size in sent if size not in known} <= {note[2] for note in notes}, notes
    for number, source, size in notes:
        assert sources[number - 1] == source
        assert size in sent


def pictures_of(content: list[Any]) -> list[bytes]:
    """Every picture in MCP content as its reader decodes it: image blocks and image blobs."""
    found = []
    for block in content:
        if isinstance(block, ImageContent):
            found.append(base64.b64decode(block.data))
        elif (isinstance(block, EmbeddedResource)
              and isinstance(block.resource, BlobResourceContents)
              and (block.resource.mime_type or "").startswith("image/")):
            found.append(base64.b64decode(block.resource.blob))
    return found


def check_delivery(offered: list[dict[str, Any]], pictures: list[bytes], texts: list[str],
                   limits: ImageLimits) -> None:
    """What a recipient got of the images `offered` to it (in order): each picture or a note
    naming it, within `limits`, every smaller one noted with its source size, and no base64 run
    in any text it reads."""
    sources = recipient_sources(offered, texts)
    assert len(pictures) + sum(named_missing(t) for t in texts) == len(sources), texts
    assert len(pictures) <= limits.max_images
    sizes = []
    for picture in pictures:
        assert len(picture) <= limits.max_bytes
        with Image.open(io.BytesIO(picture)) as opened:
            assert max(opened.size) <= limits.max_edge_px
            sizes.append(opened.size)
    assert [t for t in texts if find_media(t) is not None] == []
    check_scale_notes(sources, sizes, texts)


def images_with_types(result: Any) -> list[tuple[bytes, str]]:
    """The image blocks of a tool result as a client decodes them, with the type each says."""
    return [(base64.b64decode(b.data), b.mime_type) for b in result.content
            if isinstance(b, ImageContent)]


def pixel_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as opened:
        return opened.size
