"""Hostile input: whatever bytes or text arrive, `normalize_image` answers and never sends > 2 MiB."""

from __future__ import annotations

import base64
import hashlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseforks.core.media import MAX_BYTES
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import DroppedImage, NormalizedImage
from tests.helpers import imagegen as gen

_SEEDS = [
    gen.jpeg(40, 30),
    gen.encode(gen.photo(40, 30), "PNG"),
    gen.encode(gen.photo(40, 30), "WEBP", quality=80),
    gen.encode(gen.photo(40, 30), "WEBP", lossless=True),
    gen.animated_webp(16, 16, [(255, 0, 0), (0, 255, 0)]),
]


def check(result: NormalizedImage | DroppedImage) -> None:
    if isinstance(result, NormalizedImage):
        assert result.size == len(result.data) <= MAX_BYTES
        assert result.digest == hashlib.sha256(result.data).hexdigest()
        assert result.media_type in ("image/jpeg", "image/webp", "image/png")
        assert result.width >= 1 and result.height >= 1
    else:
        assert isinstance(result, DroppedImage)
        assert result.reason in ("unreadable", "unsupported_format", "too_large")
        # The last-resort catch-all must not be what answered: each failure has a named cause.
        assert not result.detail.startswith("unexpected"), result.detail


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=4096))
def test_arbitrary_bytes_never_raise_and_never_exceed_the_limit(data: bytes) -> None:
    check(normalize_image(data))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=512))
def test_arbitrary_text_never_raises(text: str) -> None:
    check(normalize_image(text))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(_SEEDS),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8),
    cut=st.integers(0, 10_000),
    as_base64=st.booleans(),
)
def test_damaged_real_images_never_raise(
    seed: bytes, edits: list[tuple[int, int]], cut: int, as_base64: bool
) -> None:
    """Valid files with bytes flipped and tails cut reach deep into every header reader."""
    data = bytearray(seed)
    for position, value in edits:
        data[position % len(data)] = value
    damaged = bytes(data[: max(1, len(data) - cut % len(data))])
    check(normalize_image(base64.b64encode(damaged).decode() if as_base64 else damaged))
