"""The numbers of the tool-image rules, and the media-type names a person reads.

Kept apart from the code that applies them (`fuseforks.images`) because texts name them too
("a tool result carries at most 4 images"): one definition, read by both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from fuseforks.core.errors import ConfigError

MAX_EDGE_PX = 1568
"""Long edge of an image sent to a model; larger images are scaled down."""
MAX_BYTES = 2 * 1024 * 1024
"""Size of one sent image."""
MAX_IMAGES_PER_RESULT = 4
"""Kept images per tool result; the rest are dropped as `too_many`."""
DECODE_MAX_EDGE_PX = 16_384
"""A declared edge above this is `too_large` without decoding."""
DECODE_MAX_PIXELS = 50_000_000
"""The decode budget: an image whose decoder would produce more pixels than this is `too_large`,
refused from its header before any pixel is decoded. Pillow holds 4 bytes per pixel for RGB and
RGBA alike, so 50 MP is 200 MB per full-size buffer, and the re-encode keeps at most two alive at
once (`fuseforks.images.reencode`). Measured peak RSS of one normalization at the budget, 7,071 x
7,071 px, interpreter included: 406 MB for an RGBA or LA PNG, 416 MB for a palette PNG with
transparency, 310 MB for a 16-bit grey PNG, 227 MB for an RGB PNG (`benchmarks/bench_images.py`
prints the worst one). Without a budget the legal worst case, a 16,384 x 16,384 PNG, took 2.1 GB
and 15 s. A JPEG decodes at 1/2, 1/4 or 1/8 scale when that still covers the sent size, so even a
16,384 x 16,384 JPEG decodes to 2,048 x 2,048 (4.2 MP, 57 MB peak at 50 MP) and stays accepted.
50 MP keeps every 8K screenshot (7,680 x 4,320 = 33 MP) and a 7,000 x 7,000 scan."""
WEBP_DECODE_MAX_PIXELS = DECODE_MAX_PIXELS // 2
"""WebP's share of the budget: Pillow's WebP decoder holds each pixel three times while it loads
(libwebp's frame, a bytes copy of it, the image), so 25 MP of WebP peaks at 409 MB — as much as
50 MP of PNG — where 50 MP peaked at 791 MB."""
INPUT_MAX_BYTES = 64 * 1024 * 1024
"""Decoded input above this is `too_large` before decoding."""
JPEG_QUALITY = 85
"""Quality of every JPEG fuseforks writes (re-encode, the WebP-to-JPEG resend)."""
SHRINK_STEPS = 8
"""Tries at a smaller size an image gets to fit `ImageLimits.max_bytes` when it may shrink."""
SHRINK_MIN_EDGE_PX = 64
"""The long edge an image is never shrunk below to fit a byte limit: smaller says nothing."""


class ImageLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The limits the image pipeline applies to the images of one tool result.

    The defaults are the engine's own rules (the constants above). The gateway runs the same
    pipeline with the limits of the client in front of it (a client profile), so every rule
    stays in one place and only its numbers change.
    """

    max_edge_px: int = MAX_EDGE_PX
    """Long edge of a sent image; a larger one is scaled down to it."""
    max_bytes: int = MAX_BYTES
    """Size of one sent image."""
    max_images: int = MAX_IMAGES_PER_RESULT
    """Kept images per tool result; the rest are dropped as `too_many`."""
    shrink: bool = False
    """A re-encoded image still over `max_bytes` is scaled down further until it fits (down to
    `SHRINK_MIN_EDGE_PX`) instead of being dropped as `too_large`. The engine keeps it off."""
    max_short_edge_px: int = 0
    """Short edge of a sent image, when the client scales any larger one down itself (0: no
    such limit): sending it at that size already keeps the client's own resize off it."""
    webp: bool = True
    """The client carries WebP under its own type; when not, images go as PNG or JPEG."""
    split_pages: bool = False
    """A page too tall for the long edge goes as parts of a screen's shape, its text as it was
    drawn (`fuseforks.images.pages`). The engine keeps it off."""

    def __post_init__(self) -> None:
        if (self.max_edge_px < 1 or self.max_bytes < 1 or self.max_images < 0
                or self.max_short_edge_px < 0):
            raise ConfigError("image limits must be positive (max_images may be 0)")

    def edge_for(self, width: int, height: int) -> int:
        """The long edge an image of `width` x `height` may have: `max_edge_px`, or less where
        the short edge limit comes first."""
        if not self.max_short_edge_px or min(width, height) <= self.max_short_edge_px:
            return self.max_edge_px
        # the largest long edge whose scaled short edge still rounds to the limit or less
        return min(self.max_edge_px, math.floor(
            (self.max_short_edge_px + 0.5) * max(width, height) / min(width, height)))


ENGINE_LIMITS = ImageLimits()
"""The limits of every turn the engine runs."""


def base64_size(size: int) -> int:
    """Characters of the base64 text of `size` bytes (padded), as MCP carries image data."""
    return 4 * -(-size // 3)


NOTE_RESERVE_BYTES = 512
"""Room kept in a result's budget for a note the gateway adds (the longest, that the last images
were left out, is under 300 bytes JSON-quoted)."""

CHARS_PER_TOKEN = 4
"""How a client that limits tool output in tokens counts them: about four characters of the
result's text per token, an image's base64 text included (see `ResultLimits`)."""


class ResultLimits(msgspec.Struct, frozen=True, kw_only=True):
    """What a client accepts of one whole tool result, images included; None: no limit.

    `max_bytes` is the size of the result as sent (JSON text). `max_tokens` is a token limit of
    the client, counted as it counts: `CHARS_PER_TOKEN` characters per token of the result's
    text, where an image's base64 counts as text. Both become one budget of characters.
    """

    max_bytes: int | None = None
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if (self.max_bytes is not None and self.max_bytes < 1) or (
                self.max_tokens is not None and self.max_tokens < 1):
            raise ConfigError("result limits must be positive")

    def budget(self) -> int | None:
        """Characters a whole result may take (ASCII JSON: one byte each); None: no limit."""
        limits = [limit for limit in (self.max_bytes,
                                      None if self.max_tokens is None
                                      else self.max_tokens * CHARS_PER_TOKEN)
                  if limit is not None]
        return min(limits) if limits else None

    def image_room(self, fixed: int) -> int | None:
        """Characters of base64 the images of a result may take together, the rest of it taking
        `fixed`: what is left of the budget after room for the notes that fitting may add (an
        image dropped or sent smaller) and for the note that says the last ones were left out.
        None: no limit."""
        budget = self.budget()
        return None if budget is None else max(budget - fixed - 2 * NOTE_RESERVE_BYTES, 0)

    def images_kept(self, fixed: int, sizes: Sequence[int]) -> int:
        """How many of a result's first images go, the rest of it taking `fixed` characters and
        each image its base64 `sizes`: all when they fit together, else as many as fit beside
        room for the note that says the rest were left out."""
        budget = self.budget()
        if budget is None or fixed + sum(sizes) <= budget:
            return len(sizes)
        used = fixed + NOTE_RESERVE_BYTES
        for kept, size in enumerate(sizes):
            if used + size > budget:
                return kept
            used += size
        return len(sizes)


MEDIA_TYPES = {"JPEG": "image/jpeg", "WEBP": "image/webp", "PNG": "image/png"}
"""Format name -> the media type fuseforks sends it as (every wire takes all three)."""
FORMAT_NAMES = {media_type: name for name, media_type in MEDIA_TYPES.items()}
"""Media type -> the format name a person reads in the display line and in replay."""


def format_name(media_type: str) -> str:
    return FORMAT_NAMES.get(media_type, media_type)


def target_size(width: int, height: int, max_edge: int = MAX_EDGE_PX) -> tuple[int, int]:
    """Long edge scaled to `max_edge` (1568 for the engine) keeping the aspect ratio; never
    upscaled, never below 1 px."""
    long_edge = max(width, height)
    if long_edge <= max_edge:
        return width, height
    scale = max_edge / long_edge
    return max(1, round(width * scale)), max(1, round(height * scale))
