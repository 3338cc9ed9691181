"""The decode budget: no accepted image needs more than a few hundred MB to normalize.

A PNG or WebP whose header declares more pixels than the budget is refused from the header, before
any pixel is decoded; a JPEG that large decodes at a reduced scale and stays accepted. Cut files
say how they are cut. (The measured peak RSS at the budget is printed by `benchmarks/bench_images.py`.)
"""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image, ImageFile

from fuseforks.core.media import DECODE_MAX_PIXELS, WEBP_DECODE_MAX_PIXELS, target_size
from fuseforks.images.normalize import normalize_image
from fuseforks.images.reencode import decoded_size
from fuseforks.images.types import DroppedImage, NormalizedImage
from tests.helpers import imagegen as gen


def webp_declaring(width: int, height: int) -> bytes:
    """A lossless WebP whose VP8L header declares `width` x `height`, with no image data."""
    bits = (width - 1) | (height - 1) << 14
    body = b"\x2f" + bits.to_bytes(4, "little") + b"\x00" * 11
    chunk = b"VP8L" + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def test_a_png_over_the_budget_is_refused_from_its_header_without_decoding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    png = gen.png_declaring(16_384, 16_384)  # legal by edge; 268 MP would take 2.1 GB
    loads: list[object] = []
    monkeypatch.setattr(ImageFile.ImageFile, "load", lambda image: loads.append(image))
    result = normalize_image(png)
    assert result == DroppedImage(
        "too_large", 0, "PNG",
        "declares 16384x16384 px = 268.4 MP, over the decode budget of 50 MP for PNG",
    )
    assert loads == []  # nothing was decoded


def test_the_budget_boundary_one_pixel_over_and_exactly_at_it() -> None:
    over = normalize_image(gen.png_declaring(7072, 7071))  # 50,006,112 px
    assert over == DroppedImage(
        "too_large", 0, "PNG",
        "declares 7072x7071 px = 50.0 MP, over the decode budget of 50 MP for PNG",
    )
    assert 7072 * 7071 > DECODE_MAX_PIXELS >= 10_000 * 5_000
    # Exactly at the budget the decoder is tried; this PNG holds one row, so it is cut short.
    at = normalize_image(gen.png_declaring(10_000, 5_000))
    assert isinstance(at, DroppedImage)
    assert (at.reason, at.detail) == ("unreadable", "truncated: the decoder ran out of data")


def test_webp_has_half_the_budget() -> None:
    assert WEBP_DECODE_MAX_PIXELS == 25_000_000
    assert normalize_image(webp_declaring(5001, 5000)) == DroppedImage(
        "too_large", 0, "WEBP",
        "declares 5001x5000 px = 25.0 MP, over the decode budget of 25 MP for WEBP",
    )
    assert normalize_image(webp_declaring(16_383, 16_383)).reason == "too_large"  # type: ignore[union-attr]


def test_a_jpeg_far_over_the_budget_is_still_accepted_at_a_reduced_decoding_scale() -> None:
    grey = Image.linear_gradient("L").resize((10_000, 6_000))  # 60 MP
    jpeg = gen.encode(grey, "JPEG", quality=80)
    assert decoded_size("JPEG", 10_000, 6_000) == (2_500, 1_500)  # 1/4 scale: 3.75 MP
    result = normalize_image(jpeg)
    assert isinstance(result, NormalizedImage)
    assert (result.path, result.source_format, result.width, result.height) == (
        "re_encoded", "JPEG", 1568, 941,
    )


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        (16_384, 16_384, (2_048, 2_048)),
        (16_384, 3, (8_192, 2)),
        (6_271, 6_271, (3_136, 3_136)),
        (3_136, 2_000, (1_568, 1_000)),
        (3_135, 3_135, (3_135, 3_135)),
        (1_568, 1_200, (1_568, 1_200)),
    ],
)
def test_the_jpeg_decoding_scale_is_the_one_pillow_picks(
    width: int, height: int, expected: tuple[int, int]
) -> None:
    assert decoded_size("JPEG", width, height) == expected
    jpeg = gen.with_jpeg_frame_size(gen.jpeg(64, 64), width, height)
    with Image.open(io.BytesIO(jpeg)) as im:
        im.draft(None, target_size(width, height))
        assert im.size == expected
    assert decoded_size("PNG", width, height) == (width, height)


def test_cut_files_say_how_they_are_cut() -> None:
    jpeg = gen.jpeg(800, 600)
    png = gen.encode(gen.photo(200, 150), "PNG")
    webp = gen.encode(gen.photo(300, 200), "WEBP", quality=80)
    cases = {
        jpeg[: len(jpeg) // 2]: f"truncated: {len(jpeg) // 2:,} bytes, no end of image after its scan",
        jpeg[:-2]: f"truncated: {len(jpeg) - 2:,} bytes, no end of image after its scan",
        jpeg[:40]: "truncated: 40 of at least 89 bytes (cut in its DQT segment)",
        png[:20_000]: f"truncated: 20,000 of at least {len(png) - 12:,} bytes (cut in its IDAT chunk)",
        png[:20]: "truncated: 20 of at least 45 bytes (cut in its header)",
        webp[:2_000]: f"truncated: 2,000 of {len(webp):,} bytes",
        webp[:15]: f"truncated: 15 of {len(webp):,} bytes",
    }
    for data, detail in cases.items():
        result = normalize_image(data)
        assert isinstance(result, DroppedImage)
        assert (result.reason, result.detail) == ("unreadable", detail)
    whole_but_no_iend = normalize_image(png[:-12])  # Pillow reads it: nothing is missing
    assert isinstance(whole_but_no_iend, NormalizedImage)
