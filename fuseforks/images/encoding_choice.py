"""What a tool image is sent as: its own bytes, lossless WebP, or JPEG — decided by its content.

Two decisions, kept apart from the decoding and resizing (`fuseforks.images.reencode`) so each can
be read and changed alone:

- `passes_through`: a JPEG, a still WebP or a small plain PNG that is whole and within the limits
  is sent as the server's exact bytes. Every wire fuseforks speaks takes `image/png`
  (Anthropic, OpenAI chat completions, Gemini and the Responses APIs list it), so a 157-byte PNG
  no longer becomes a 1,303-byte JPEG. A PNG passes only when it is at most
  `PNG_PASS_THROUGH_MAX_BYTES` (a PNG photo is several times its JPEG, and an image is sent again
  on every later round of a turn), still, opaque (transparency is flattened on white for every
  model alike), 8-bit and without a colour profile (Display P3 screenshots are converted to
  sRGB, because model pipelines ignore profiles).
- `encode_for_model`: a decoded image is a *graphic* (a screenshot, a chart, a diagram: at most
  `GRAPHIC_MAX_COLOURS` distinct colours, which a photo of this size never has) or a photo.
  Graphics go as lossless WebP — no ringing around text, and for UI screenshots a fraction of
  the JPEG's bytes (`benchmarks/bench_screenshots.py`) — when that fits the byte limit; photos, and
  graphics whose lossless WebP would not fit, as JPEG quality 85.

Both are deterministic: the same input takes the same path to the same bytes, so the digest (of
the bytes sent) is the same on every run. openai-compat endpoints that refuse WebP get the
existing one-time JPEG resend (`fuseforks.images.jpeg_fallback`).
"""

from __future__ import annotations

import io
from typing import NamedTuple

from PIL import Image

from fuseforks.core.media import JPEG_QUALITY, MAX_BYTES, MEDIA_TYPES, ImageLimits
from fuseforks.images.probe import Header

PNG_PASS_THROUGH_MAX_BYTES = 256 * 1024
"""A plain PNG up to this size is sent as it came."""
GRAPHIC_MAX_COLOURS = 32_768
"""An image with at most this many distinct colours is a graphic. A UI screenshot with
anti-aliased text has one or two thousand (3,500 once scaled down); a photo at 1568 px has
hundreds of thousands."""
WEBP_LOSSLESS_EFFORT = 80
"""Pillow's `quality` for lossless WebP is the effort (Pillow's default): 100 saves 2 % more
bytes at ten times the time."""


class Encoded(NamedTuple):
    data: bytes
    media_type: str


def passes_through(header: Header, size: int, limits: ImageLimits) -> bool:
    """The server's bytes can be sent as they are."""
    if header.format not in MEDIA_TYPES or header.animated or not header.intact:
        return False
    if max(header.width, header.height) > limits.edge_for(header.width, header.height):
        return False
    if size > limits.max_bytes or (header.format == "WEBP" and not limits.webp):
        return False
    if header.format == "PNG":
        return size <= PNG_PASS_THROUGH_MAX_BYTES and not (
            header.transparent or header.profiled or header.deep)
    return True


def is_graphic(image: Image.Image) -> bool:
    """Few colours and hard edges: a screenshot, a chart, a diagram — not a photo."""
    return image.getcolors(GRAPHIC_MAX_COLOURS) is not None


def encode_for_model(image: Image.Image, max_bytes: int = MAX_BYTES,
                     webp: bool = True) -> Encoded:
    """An RGB or L image as lossless WebP (a graphic that fits `max_bytes`) or JPEG quality 85.
    Without `webp` (a client that does not carry it), a graphic's lossless encoding is PNG."""
    if is_graphic(image):
        lossless = lossless_bytes(image, webp)
        if len(lossless.data) <= max_bytes:
            return lossless
    return Encoded(jpeg_bytes(image), "image/jpeg")


def lossless_bytes(image: Image.Image, webp: bool = True) -> Encoded:
    """An RGB or L image without loss: WebP, or PNG for a client without WebP."""
    if webp:
        return Encoded(webp_lossless_bytes(image), "image/webp")
    png = io.BytesIO()
    image.save(png, "PNG")
    return Encoded(png.getvalue(), "image/png")


def webp_lossless_bytes(image: Image.Image) -> bytes:
    """An RGB or L image as lossless WebP."""
    webp = io.BytesIO()
    image.save(webp, "WEBP", lossless=True, quality=WEBP_LOSSLESS_EFFORT)
    return webp.getvalue()


def jpeg_bytes(image: Image.Image) -> bytes:
    """An RGB or L image as JPEG quality 85."""
    jpeg = io.BytesIO()
    image.save(jpeg, "JPEG", quality=JPEG_QUALITY)
    return jpeg.getvalue()
