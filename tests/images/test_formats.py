"""Every image format fuseforks carries beyond JPEG, PNG and WebP: GIF, BMP, TIFF, ICO and AVIF,
through the same pipeline and limits (the rules: docs/image-rules.md, "Formats")."""

from __future__ import annotations

import io
import re
import struct
from pathlib import Path

import pytest
from PIL import Image

from fuseforks.core.media import DECODE_MAX_PIXELS
from fuseforks.core.signatures import sniff_format
from fuseforks.images.formats import CARRIED_FORMATS, FORMAT_FATES
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import NormalizedImage
from tests.helpers import imagegen as gen
from tests.images.test_normalize import dropped, kept

DOCS = Path(__file__).resolve().parents[2] / "docs" / "image-rules.md"


def pixels(image: NormalizedImage) -> Image.Image:
    with Image.open(io.BytesIO(image.data)) as im:
        return im.convert("RGB")


def frames(colours: list[tuple[int, int, int]], size: tuple[int, int] = (40, 30)) -> list[Image.Image]:
    return [gen.solid(*size, colour) for colour in colours]


@pytest.mark.parametrize("fmt", ["GIF", "BMP", "TIFF", "ICO", "AVIF"])
def test_each_carried_format_reaches_the_model_as_a_picture(fmt: str) -> None:
    source = gen.solid(48, 32, (200, 30, 30))
    params = {"sizes": [(48, 32)]} if fmt == "ICO" else {}
    image = kept(normalize_image(gen.encode(source, fmt, **params)))
    assert (image.source_format, image.path, image.frames) == (fmt, "re_encoded", 1)
    assert (image.width, image.height) == (48, 32)
    red, green, blue = pixels(image).getpixel((24, 16))
    assert red > 180 and green < 60 and blue < 60


def test_an_animated_gif_sends_its_first_frame_and_counts_its_frames() -> None:
    first, *rest = frames([(255, 0, 0), (0, 255, 0), (0, 0, 255)])
    data = gen.encode(first, "GIF", save_all=True, append_images=rest, duration=100, loop=0)
    image = kept(normalize_image(data))
    assert (image.source_format, image.frames) == ("GIF", 3)
    red, green, blue = pixels(image).getpixel((20, 15))
    assert red > 200 and green < 40 and blue < 40


def test_a_tiff_sends_its_first_page_and_counts_its_pages() -> None:
    first, *rest = frames([(0, 0, 255), (255, 255, 0)], size=(60, 20))
    image = kept(normalize_image(gen.encode(first, "TIFF", save_all=True, append_images=rest)))
    assert (image.source_format, image.frames, image.width, image.height) == ("TIFF", 2, 60, 20)
    red, green, blue = pixels(image).getpixel((30, 10))
    assert blue > 200 and red < 40 and green < 40


def test_an_ico_sends_its_largest_image() -> None:
    icon = gen.solid(64, 64, (0, 160, 0))
    image = kept(normalize_image(gen.encode(icon, "ICO", sizes=[(16, 16), (32, 32), (64, 64)])))
    assert (image.source_format, image.width, image.height, image.frames) == ("ICO", 64, 64, 1)


def test_a_gif_with_transparency_is_flattened_on_white() -> None:
    im = Image.new("P", (20, 20), 0)
    im.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    im.paste(1, (10, 0, 20, 20))
    image = kept(normalize_image(gen.encode(im, "GIF", transparency=0)))
    assert pixels(image).getpixel((2, 10)) == (255, 255, 255)


def _ico_holding(png: bytes, declared: int = 64) -> bytes:
    """An ICO whose one entry is `png`, its directory declaring `declared` px (0 means 256)."""
    directory = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", declared % 256, declared % 256, 0, 0, 1, 32, len(png), 22)
    return directory + entry + png


def test_an_ico_whose_png_declares_more_than_the_budget_is_refused_before_decoding() -> None:
    edge = int(DECODE_MAX_PIXELS**0.5) + 100
    result = dropped(normalize_image(_ico_holding(gen.png_declaring(edge, edge))))
    assert (result.reason, result.source_format) == ("too_large", "ICO")
    assert "over the decode budget" in result.detail


@pytest.mark.parametrize("fmt", ["GIF", "BMP", "TIFF"])
def test_the_decode_budget_holds_for_every_carried_format(fmt: str) -> None:
    # An edge within 16,384 px but pixels over the budget: refused from the header alone.
    huge = Image.new("1" if fmt != "GIF" else "P", (12_000, 5_000))
    result = dropped(normalize_image(gen.encode(huge, fmt)))
    assert (result.reason, result.source_format) == ("too_large", fmt)
    assert "over the decode budget" in result.detail


def test_heif_and_svg_stay_not_carried() -> None:
    heif = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"
    assert dropped(normalize_image(heif)).reason == "unsupported_format"
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    assert (dropped(normalize_image(svg)).reason, sniff_format(svg)) == ("unsupported_format", "SVG")


def _documented_fates() -> dict[str, str]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Formats", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([A-Z0-9]+)` \| (carried|not carried) \|", section, re.MULTILINE)
    return dict(rows)


def test_the_image_rules_list_every_known_format_and_what_happens_to_it() -> None:
    documented = _documented_fates()
    assert documented == {name: fate.split(":")[0] for name, fate in FORMAT_FATES.items()}
    assert {name for name, fate in documented.items() if fate == "carried"} == CARRIED_FORMATS


def test_every_format_the_magic_number_table_names_has_a_fate() -> None:
    from fuseforks.core.signatures import RECOGNIZED_IMAGE_SIGNATURES

    named = {"JPEG", "PNG", "WEBP", "AVIF", "HEIF"} | {n for _, _, n in RECOGNIZED_IMAGE_SIGNATURES}
    assert set(FORMAT_FATES) == named
