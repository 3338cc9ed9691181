"""Deterministic test images, built with Pillow; shared by the content server and the tests.

Each function returns the exact bytes the content server sends, so a test can compare digests.
Noise images are seeded: the same call gives the same bytes on the same Pillow build.
"""

from __future__ import annotations

import functools
import io
import random

from PIL import Image


def _save(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


def _noise(width: int, height: int, seed: int) -> Image.Image:
    rng = random.Random(seed)
    return Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))


def solid_jpeg(colour: tuple[int, int, int], size: tuple[int, int] = (320, 240)) -> bytes:
    return _save(Image.new("RGB", size, colour), "JPEG", quality=85)


def png_with_alpha() -> bytes:
    """200x100 PNG: left half fully transparent, right half opaque blue."""
    image = Image.new("RGBA", (200, 100), (0, 0, 0, 0))
    image.paste((0, 0, 255, 255), (100, 0, 200, 100))
    return _save(image, "PNG")


def gif() -> bytes:
    """An animated 40x30 GIF of three frames: red, green, blue."""
    first, *rest = (Image.new("RGB", (40, 30), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255)))
    return _save(first, "GIF", save_all=True, append_images=rest, duration=100, loop=0)


def tiff() -> bytes:
    """A TIFF of two 60x20 pages: yellow, then blue."""
    first, second = (Image.new("RGB", (60, 20), c) for c in ((255, 255, 0), (0, 0, 255)))
    return _save(first, "TIFF", save_all=True, append_images=[second])


def bmp() -> bytes:
    return _save(Image.new("RGB", (24, 16), (0, 128, 0)), "BMP")


SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'


@functools.cache
def jpeg_1_5_mb() -> bytes:
    """A 1400x1200 noise JPEG of about 1.5 MB: inside the pass-through limits."""
    return _save(_noise(1400, 1200, 1), "JPEG", quality=90, subsampling=2)


@functools.cache
def jpeg_near_2_mib() -> bytes:
    """A 1560x1430 noise JPEG just under 2 MiB: the largest kind that still passes through."""
    return _save(_noise(1560, 1430, 3), "JPEG", quality=90, subsampling=2)


@functools.cache
def png_10_mb() -> bytes:
    """A 1900x1800 noise PNG of about 10 MB: re-encoded by the client, not sent as is."""
    return _save(_noise(1900, 1800, 2), "PNG", compress_level=1)


FIVE_COLOURS: tuple[tuple[int, int, int], ...] = (
    (255, 0, 0),
    (0, 255, 0),
    (0, 0, 255),
    (255, 255, 0),
    (0, 255, 255),
)


CHECKSUM = "".join(random.Random(256).choices("0123456789abcdef", k=256))
"""A 256-hex-digit checksum: a long run of base64-alphabet characters that is text."""
JWT = (
    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9."
    + "eyJzdWIiOiJjYW1lcmEtMDEiLCJzY29wZSI6InJlYWQ6ZnJhbWVzIHdyaXRlOnNldHRpbmdzIn0"
    + "."
    + "".join(random.Random(7).choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", k=342))
)
LONG_WORDS = (
    f"sha256 manifest: {CHECKSUM}\n"
    f"token: {JWT}\n"
    "note (base64): VGhlIGNhbWVyYSBpcyBmb2N1c2VkIG9uIHRoZSBkb29yIGFuZCB0aGUgbGlnaHQgaXMgZ29vZC4gQWxs"
    "IGZyYW1lcyBhcmUga2VwdCBmb3Igc2V2ZW4gZGF5cywgdGhlbiBkZWxldGVkIHdpdGhvdXQgYSB0cmFjZS4="
)
"""What a text tool may well return: every line must reach the model exactly as written."""
