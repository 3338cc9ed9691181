"""Header reading: every WebP and JPEG layout a server may send, read without decoding."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageCms

from fuseforks.core.signatures import sniff_format
from fuseforks.images.probe import Header, ProbeError, probe
from tests.helpers import imagegen as gen

SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
TRANSLUCENT = gen.solid(300, 200, (0, 128, 255, 100), mode="RGBA")


@pytest.mark.parametrize(
    ("data", "chunk"),
    [
        (gen.encode(gen.photo(301, 201), "WEBP", quality=80), b"VP8 "),
        (gen.encode(TRANSLUCENT, "WEBP", lossless=True), b"VP8L"),
        (gen.encode(TRANSLUCENT, "WEBP", quality=80), b"VP8X"),  # VP8X + ALPH + VP8
        (gen.encode(TRANSLUCENT, "WEBP", quality=80, icc_profile=SRGB), b"VP8X"),
        (gen.encode(TRANSLUCENT, "WEBP", quality=80, exif=gen.exif_with_orientation(6)), b"VP8X"),
    ],
)
def test_still_webp_layouts(data: bytes, chunk: bytes) -> None:
    assert data[12:16] == chunk
    width, height = Image.open(io.BytesIO(data)).size
    assert probe(data, "WEBP") == Header("WEBP", width, height)


def test_animated_webp_is_flagged() -> None:
    data = gen.animated_webp(20, 10, [(0, 0, 0), (255, 255, 255)])
    assert probe(data, "WEBP") == Header("WEBP", 20, 10, animated=True)


def test_webp_with_a_short_riff_is_not_intact() -> None:
    data = gen.encode(gen.photo(301, 201), "WEBP", quality=80)
    assert probe(data[:-10], "WEBP").intact is False


def test_progressive_jpeg_is_read_and_intact() -> None:
    data = gen.encode(gen.photo(640, 480), "JPEG", progressive=True, quality=80)
    assert probe(data, "JPEG") == Header("JPEG", 640, 480)
    # Cut between two progressive scans: still not intact.
    second_scan = data.index(b"\xff\xda", data.index(b"\xff\xda") + 2)
    assert probe(data[:second_scan], "JPEG").intact is False


def test_jpeg_with_an_exif_thumbnail_is_sized_by_the_main_frame() -> None:
    exif = Image.Exif()
    exif[0x0112] = 1
    data = gen.encode(gen.photo(900, 600), "JPEG", exif=exif.tobytes())
    assert probe(data, "JPEG") == Header("JPEG", 900, 600)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xd8\xff", "JPEG ends before its first scan"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "JPEG segment runs past the end"),
        (b"\xff\xd8\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", "JPEG scan before any frame header"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 30, "PNG does not start with IHDR"),
        (b"RIFF\x04\x00\x00\x00WEBPVP8 ", "WebP is shorter than its first chunk header"),
    ],
)
def test_malformed_headers_are_named(data: bytes, message: str) -> None:
    fmt = sniff_format(data)
    assert fmt is not None
    with pytest.raises(ProbeError, match=message):
        probe(data, fmt)


@pytest.mark.parametrize(
    ("head", "name"),
    [
        (b"\xff\xd8\xff\xe0", "JPEG"),
        (b"\x89PNG\r\n\x1a\n", "PNG"),
        (b"RIFF\x00\x00\x00\x00WEBP", "WEBP"),
        (b"GIF87a", "GIF"),
        (b"GIF89a", "GIF"),
        (b"BM\x00\x00", "BMP"),
        (b"II*\x00", "TIFF"),
        (b"MM\x00*", "TIFF"),
        (b"\x00\x00\x00\x1cftypavif", "AVIF"),
        (b"\x00\x00\x00\x18ftypheic", "HEIF"),
        (b"8BPS", "PSD"),
        (b"qoif", "QOI"),
        (b"%PDF-1.7", "PDF"),
        (b"RIFF\x00\x00\x00\x00WAVE", None),
        (b"\xff\xd8", None),  # too short to be sure
        (b"", None),
    ],
)
def test_sniffing_the_magic_number(head: bytes, name: str | None) -> None:
    assert sniff_format(head) == name
