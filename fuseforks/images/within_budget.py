"""Fitting an image into a byte budget so its text stays readable: quality before scale.

When a client's limit forces an image smaller than its normal encoding, there are two ways to
lose bytes: compress harder, or drop pixels. For text (screenshots, dashboards, documents) they
are not alike: a glyph that keeps its pixels survives strong compression, a glyph scaled below
a few pixels is gone at any quality. `benchmarks/bench_legibility.py` measured it with
tesseract: a 1280x3000 page scaled to 896x2100 read as well as the original as lossy WebP
quality 20 in 71 KB, while scaling on at quality 85 until it fit read nothing.

So quality goes before scale, down to the size its text needs:

- a *graphic* (`is_graphic`) is lossless WebP when that fits; else lossy WebP at quality 90 or
  more at the largest size that fits, from the whole down to its *legible size* — where the ink
  of its lines of text (`text_height`, from its projection profile) is still `LEGIBLE_TEXT_PX`
  high; else at the legible size at the highest quality of `WEBP_QUALITIES` that fits (WebP
  keeps the edges of text sharper than JPEG at the same bytes; the benchmark's grid search
  compares JPEG, PNG and both WebPs). A client without WebP gets PNG and JPEG the same way;
- a photo is JPEG at the highest quality of `JPEG_QUALITIES` that fits;
- when even the lowest quality does not fit, the size goes down by the square root of the ratio
  still to lose (an encoding's size follows its pixel count), a little more, and the qualities
  are tried again; never below `SHRINK_MIN_EDGE_PX`, at most `SHRINK_STEPS` sizes. A graphic
  with text that goes below its legible size is not `legible`: its note says so.

The last try is returned even when it does not fit: the caller drops it then. Deterministic:
the same pixels and budget give the same bytes.
"""

from __future__ import annotations

import io
import math
import statistics
from collections.abc import Callable, Sequence
from typing import NamedTuple

from PIL import Image, ImageFilter

from fuseforks.core.media import JPEG_QUALITY, SHRINK_MIN_EDGE_PX, SHRINK_STEPS, target_size
from fuseforks.images.encoding_choice import Encoded, is_graphic, lossless_bytes

GOOD_QUALITY = 90
"""A lossy quality at which compression leaves text as it was: a size where it fits is taken
before any lower quality."""
WEBP_QUALITIES = tuple(range(95, 0, -5))
"""Lossy WebP qualities a graphic is tried at, best first: at the legible size, text read well
even at 5, where a smaller size read nothing."""
GOOD_QUALITIES = tuple(q for q in WEBP_QUALITIES if q >= GOOD_QUALITY)
JPEG_QUALITIES = (JPEG_QUALITY, 75, 65, 55, 45, 35)
"""JPEG qualities a photo is tried at, best first (from the engine's own 85)."""
LEGIBLE_TEXT_PX = 9
"""The height of a line of text's ink, in pixels, below which tesseract stopped reading it (15 px
UI text at 1x has ink 13 px high; `benchmarks/bench_legibility.py`)."""
SCALE_STEPS = (1.0, 0.85, 0.7)
"""Sizes between the whole and the legible size where the good quality is looked for."""
_LOSSLESS_SLACK = 1.5
"""Lossless WebP is tried at a smaller size when the whole one's bytes, scaled by the area,
come within this factor of the budget (smaller text packs less well)."""
_MARGIN = 0.95
"""Scale a little more than the square root says, so the next size is likely to fit."""
_INK_LEVEL = 4
"""Mean edge strength (0-255) of a pixel row that has text in it."""
_MIN_INK_ROWS = 3
"""Shorter runs of inked rows are rules and borders, not text."""


def text_height(image: Image.Image) -> float | None:
    """The ink height of the image's lines of text, in pixels, by its projection profile: rows
    with edges in them come in runs, one a line of text; the median run is taken. None: no
    runs (no text to keep legible)."""
    edges = image.convert("L").filter(ImageFilter.FIND_EDGES)
    profile = edges.resize((1, edges.height), Image.Resampling.BOX).tobytes()
    runs: list[int] = []
    run = 0
    for level in (*profile, 0):
        if level > _INK_LEVEL:
            run += 1
            continue
        if run >= _MIN_INK_ROWS:
            runs.append(run)
        run = 0
    return statistics.median(runs) if runs else None


def _webp(image: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    image.save(out, "WEBP", quality=quality)
    return out.getvalue()


def _jpeg(image: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


def _best_quality(image: Image.Image, encode: Callable[[Image.Image, int], bytes],
                  qualities: Sequence[int], max_bytes: int) -> tuple[bytes, bool]:
    """The encoding at the highest of `qualities` (best first) within `max_bytes`, found by
    bisection (size falls with quality), and whether it fits; the lowest quality's when none
    does."""
    low, high = 0, len(qualities) - 1
    found: bytes | None = None
    smallest: bytes | None = None
    while low <= high:
        middle = (low + high) // 2
        data = encode(image, qualities[middle])
        if len(data) <= max_bytes:
            found, high = data, middle - 1
        else:
            if middle == len(qualities) - 1:
                smallest = data
            low = middle + 1
    if found is not None:
        return found, True
    return smallest if smallest is not None else encode(image, qualities[-1]), False


def encode_within(image: Image.Image, max_bytes: int,
                  qualities: Sequence[int] = WEBP_QUALITIES,
                  lossless: bool = True, webp: bool = True) -> tuple[Encoded, bool]:
    """A graphic at its size, lossless when that fits (tried only when `lossless`), else at the
    best of `qualities` whose bytes fit `max_bytes`, and whether they do (when not: the smallest
    encoding tried). Without `webp`: PNG and JPEG at the same qualities."""
    without_loss = lossless_bytes(image, webp) if lossless else None
    if without_loss is not None and len(without_loss.data) <= max_bytes:
        return without_loss, True
    data, fits = _best_quality(image, _webp if webp else _jpeg, qualities, max_bytes)
    lossy = Encoded(data, "image/webp" if webp else "image/jpeg")
    if not fits and without_loss is not None and len(without_loss.data) < len(data):
        # Flat UI compresses better without loss than at any lossy quality: the smaller one is
        # what the next size is estimated from.
        return without_loss, False
    return lossy, fits


def _jpeg_within(image: Image.Image, max_bytes: int) -> tuple[Encoded, bool]:
    data, fits = _best_quality(image, _jpeg, JPEG_QUALITIES, max_bytes)
    return Encoded(data, "image/jpeg"), fits


def _resized(rgb: Image.Image, scale: float) -> Image.Image:
    if scale >= 1.0:
        return rgb
    long_edge = max(SHRINK_MIN_EDGE_PX, math.floor(max(rgb.size) * scale))
    return rgb.resize(target_size(rgb.width, rgb.height, long_edge), Image.Resampling.LANCZOS)


class Fitted(NamedTuple):
    encoded: Encoded
    width: int
    height: int
    legible: bool
    """Its text kept the pixels it needs to be read (or it has none)."""


def fit_legibly(rgb: Image.Image, max_bytes: int, webp: bool = True) -> Fitted:
    """`rgb` within `max_bytes`, as the module says: a graphic at the largest size down to the
    legible one where a good quality fits, else at the legible size at the best quality that
    fits, else smaller; a photo at the best JPEG quality before any smaller size. Without
    `webp` (a client that does not carry it) a graphic is PNG or JPEG instead."""
    if not is_graphic(rgb):
        return _scaled_until_fits(rgb, max_bytes, lambda im: _jpeg_within(im, max_bytes),
                                  legible=True)
    whole = len(lossless_bytes(rgb, webp).data)

    def within(image: Image.Image, qualities: Sequence[int]) -> tuple[Encoded, bool]:
        # lossless is tried only where its size, which follows the pixel count, could fit
        area = image.width * image.height / (rgb.width * rgb.height)
        return encode_within(image, max_bytes, qualities,
                             lossless=whole * area <= max_bytes * _LOSSLESS_SLACK, webp=webp)

    height = text_height(rgb)
    legible_scale = 1.0 if height is None else min(1.0, LEGIBLE_TEXT_PX / height)
    for scale in (s for s in SCALE_STEPS if s > legible_scale):
        image = _resized(rgb, scale)
        encoded, fits = within(image, GOOD_QUALITIES)
        if fits:
            return Fitted(encoded, *image.size, legible=True)
    at_legible = _resized(rgb, legible_scale)
    return _scaled_until_fits(at_legible, max_bytes,
                              lambda image: within(image, WEBP_QUALITIES),
                              legible=height is None)


def _scaled_until_fits(rgb: Image.Image, max_bytes: int,
                       encode: Callable[[Image.Image], tuple[Encoded, bool]],
                       legible: bool) -> Fitted:
    """`rgb` as `encode` writes it, or smaller and smaller by the square root of the ratio still
    to lose (an encoding's size follows its pixel count), a little more, until it fits; never
    below `SHRINK_MIN_EDGE_PX`, at most `SHRINK_STEPS` sizes. The last try when none fits;
    `legible` says what a smaller size than `rgb` is (`rgb` itself is legible)."""
    image = rgb
    encoded, fits = encode(image)
    for _ in range(SHRINK_STEPS):
        if fits:
            break
        long_edge = max(SHRINK_MIN_EDGE_PX, math.floor(
            max(image.size) * math.sqrt(max_bytes / len(encoded.data)) * _MARGIN))
        if long_edge >= max(image.size):
            break
        image = rgb.resize(target_size(rgb.width, rgb.height, long_edge),
                           Image.Resampling.LANCZOS)
        encoded, fits = encode(image)
    return Fitted(encoded, *image.size, legible=legible or image.size == rgb.size)
