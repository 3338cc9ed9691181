"""A tall page sent in parts, so its text keeps the pixels it needs.

A full-page screenshot is several screens high: at the long-edge limit (1568 px) a 1280x3000
page has its 15 px text scaled to 8 px, and no encoding reads it again — tesseract read 0.45 of
the unencoded picture (`benchmarks/bench_legibility.py`). Cut into parts of a screen's shape,
each part fits the limit at its own size: the text is as the server drew it.

So a still image more than `PAGE_RATIO` times as tall as it is wide, and taller than the limit
lets it be, is cut from top to bottom into equal parts no taller than `PART_RATIO` times its
width — at most as many as the result has room for — each part the server's own pixels as PNG.
The parts then go through the image rules like any image. Only what a client is sent is cut
(`ImageLimits.split_pages`); a page already within the limit, a wide image, an animation, a
damaged file or one over the decode budget is left whole.
"""

from __future__ import annotations

import io
import itertools
import math

from PIL import Image

from fuseforks.core.media import ImageLimits
from fuseforks.core.signatures import sniff_format
from fuseforks.images.formats import decode_budget
from fuseforks.images.probe import ProbeError, probe

PAGE_RATIO = 2.0
"""An image at least this many times as tall as it is wide is a page."""
_ORIENTATION_TAG = 0x0112
PART_RATIO = 1.6
"""A part is at most this many times as tall as it is wide: a screen's shape (1568x980)."""


def page_parts(data: bytes, limits: ImageLimits, most: int) -> tuple[tuple[int, int], list[bytes]]:
    """The page's size and its parts as PNG, top to bottom; no parts when it stays whole (see
    the module). `most`: the parts the result has room for."""
    fmt = sniff_format(data[:32])
    if fmt not in ("PNG", "JPEG", "WEBP") or most < 2:
        return (0, 0), []
    try:
        header = probe(data, fmt)
    except ProbeError:
        return (0, 0), []
    width, height = header.width, header.height
    whole: tuple[tuple[int, int], list[bytes]] = ((width, height), [])
    if header.animated or not header.intact or height < width * PAGE_RATIO:
        return whole
    if height <= limits.edge_for(width, height) or width * height > decode_budget(fmt):
        return whole
    count = min(most, math.ceil(height / (width * PART_RATIO)))
    if count < 2:
        return whole
    try:
        return (width, height), _cut(data, fmt, (width, height), count)
    except Exception:  # Pillow raises many types for broken files: the image rules say why
        return whole


def _cut(data: bytes, fmt: str, size: tuple[int, int], count: int) -> list[bytes]:
    with Image.open(io.BytesIO(data), formats=[fmt]) as page:
        if page.size != size or page.getexif().get(_ORIENTATION_TAG, 1) != 1:
            return []  # turned by its EXIF, or read otherwise than the header: left whole
        page.load()
        width, height = size
        bounds = [round(height * i / count) for i in range(count + 1)]
        parts = []
        for top, bottom in itertools.pairwise(bounds):
            out = io.BytesIO()
            page.crop((0, top, width, bottom)).save(out, "PNG")
            parts.append(out.getvalue())
    return parts
