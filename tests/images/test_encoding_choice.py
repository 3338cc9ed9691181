"""The choice of encoding: pass-through for a small plain PNG, lossless WebP for a graphic, JPEG
for a photo — decided by content, the same way every time (docs/image-rules.md). No OCR here: the
benchmark measures legibility (`benchmarks/bench_screenshots.py`)."""

from __future__ import annotations

import base64
import hashlib
import io
import struct

import pytest
from PIL import Image

from fuseforks.core.media import MAX_BYTES
from fuseforks.events.privacy import media_spans
from fuseforks.images.encoding_choice import GRAPHIC_MAX_COLOURS, PNG_PASS_THROUGH_MAX_BYTES
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import DroppedImage, NormalizedImage
from tests.helpers import imagegen as gen


def kept(result: NormalizedImage | DroppedImage) -> NormalizedImage:
    assert isinstance(result, NormalizedImage), result
    return result


def test_a_tiny_png_passes_through_as_png() -> None:
    png = gen.encode(gen.solid(16, 16, (0, 90, 200)), "PNG")
    assert len(png) < 200
    image = kept(normalize_image(png))
    assert (image.path, image.media_type, image.data) == ("pass_through", "image/png", png)
    assert image.digest == hashlib.sha256(png).hexdigest()


def test_a_screenshot_png_within_the_pass_through_size_passes_through() -> None:
    shot, _ = gen.screenshot(1200, 800)
    png = gen.encode(shot, "PNG")
    assert len(png) <= PNG_PASS_THROUGH_MAX_BYTES
    assert kept(normalize_image(png)).path == "pass_through"


@pytest.mark.parametrize(
    ("why", "data"),
    [
        ("transparent", gen.encode(gen.solid(16, 16, (0, 0, 0, 0), mode="RGBA"), "PNG")),
        ("tRNS", gen.encode(gen.solid(16, 16, (3,), mode="P"), "PNG", transparency=3)),
        ("16-bit", gen.encode(gen.solid(16, 16, (4000,), mode="I;16"), "PNG")),
        ("profiled", gen.encode(gen.solid(16, 16, (9, 9, 9)), "PNG", icc_profile=gen.swapped_primaries_icc())),
        ("animated", gen.encode(gen.solid(16, 16, (1, 2, 3)), "PNG", save_all=True,
                                append_images=[gen.solid(16, 16, (3, 2, 1))])),
        ("over 256 KiB", gen.encode(gen.solid(16, 16, (5, 5, 5)), "PNG",
                                    pnginfo=gen.png_text_over(PNG_PASS_THROUGH_MAX_BYTES))),
        ("over 1568 px", gen.encode(gen.solid(1569, 2, (5, 5, 5)), "PNG")),
    ],
)
def test_a_png_that_is_not_plain_and_small_is_re_encoded(why: str, data: bytes) -> None:
    image = kept(normalize_image(data))
    assert (image.path, image.source_format) == ("re_encoded", "PNG"), why


def test_a_png_with_a_damaged_chunk_never_passes_through() -> None:
    png = bytearray(gen.encode(gen.photo(40, 30), "PNG"))
    at = png.index(b"IDAT")
    (length,) = struct.unpack_from(">I", png, at - 4)
    png[at + 4 + length] ^= 0xFF  # the CRC of IDAT: the pixels may be fine, the file is not
    assert kept(normalize_image(bytes(png))).path == "re_encoded"


def test_a_screenshot_is_sent_lossless_and_smaller_than_its_jpeg() -> None:
    shot, _ = gen.screenshot(3136, 1960, scale=2.0)  # a 2x screen: scaled down to 1568 px
    image = kept(normalize_image(gen.encode(shot, "PNG")))
    assert (image.path, image.media_type, image.width, image.height) == (
        "re_encoded", "image/webp", 1568, 980)
    with Image.open(io.BytesIO(image.data)) as sent:
        assert sent.format == "WEBP" and sent.info.get("lossless", True)
    jpeg = io.BytesIO()
    shot.resize((1568, 980)).save(jpeg, "JPEG", quality=85)
    assert image.size < jpeg.tell()


def test_a_photo_is_sent_as_jpeg() -> None:
    photo = gen.photo(2000, 1500)
    assert photo.getcolors(GRAPHIC_MAX_COLOURS) is None
    image = kept(normalize_image(gen.encode(photo, "PNG")))
    assert (image.media_type, image.width, image.height) == ("image/jpeg", 1568, 1176)


def test_a_graphic_whose_lossless_webp_is_over_the_limit_goes_as_jpeg() -> None:
    # Eight colours (a graphic), but noise: lossless WebP over 2 MiB at this size is avoided
    # only if it would not fit; at 1568 x 1568 it fits, so the binary noise is sent lossless.
    noise = gen.binary_noise(1568, 1568)
    image = kept(normalize_image(gen.encode(noise, "PNG")))
    assert image.media_type == "image/webp" and image.size <= MAX_BYTES


def test_the_same_input_takes_the_same_path_to_the_same_bytes() -> None:
    shot, _ = gen.screenshot(2000, 1200, seed=3)
    png = gen.encode(shot, "PNG")
    first, second = kept(normalize_image(png)), kept(normalize_image(png))
    assert (first.path, first.media_type, first.digest) == (second.path, second.media_type,
                                                             second.digest)
    assert first.digest == hashlib.sha256(first.data).hexdigest()


@pytest.mark.parametrize("fmt", ["GIF", "BMP", "TIFF", "ICO", "AVIF", "PNG", "WEBP"])
def test_the_privacy_guard_recognises_every_carried_format_in_base64(fmt: str) -> None:
    data = gen.encode(gen.photo(32, 32), fmt)
    text = f"here it is: {base64.b64encode(data).decode()} (done)"
    assert [what for _, _, what in media_spans(text)] != []
