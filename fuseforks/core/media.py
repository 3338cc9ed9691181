"""The numbers of the tool-image rules, and the media-type names a person reads.

Kept apart from the code that applies them (`fuseforks.images`) because texts name them too
("a tool result carries at most 4 images"): one definition, read by both.
"""

from __future__ import annotations

MAX_EDGE_PX = 1568
"""Long edge of an image sent to a model; larger images are scaled down."""
MAX_BYTES = 2 * 1024 * 1024
"""Size of one sent image."""
MAX_IMAGES_PER_RESULT = 4
"""Kept images per tool result; the rest are dropped as `too_many`."""
DECODE_MAX_EDGE_PX = 16_384
"""A declared edge above this is `too_large` without decoding."""
INPUT_MAX_BYTES = 64 * 1024 * 1024
"""Decoded input above this is `too_large` before decoding."""
JPEG_QUALITY = 85
"""Quality of every JPEG fuseforks writes (re-encode, the WebP-to-JPEG resend)."""

MEDIA_TYPES = {"JPEG": "image/jpeg", "WEBP": "image/webp"}
"""Format name -> the media type fuseforks sends it as (PNG is always re-encoded)."""
FORMAT_NAMES = {media_type: name for name, media_type in MEDIA_TYPES.items()}
"""Media type -> the format name a person reads in the display line and in replay."""


def format_name(media_type: str) -> str:
    return FORMAT_NAMES.get(media_type, media_type)
