"""The per-result step: at most four kept, in order; the async variant agrees and runs in threads."""

from __future__ import annotations

import base64
import threading
from typing import Any

import pytest

from fuseforks.core.media import ENGINE_LIMITS
from fuseforks.images import normalize as images_module
from fuseforks.images.normalize import (
    normalize_image,
    normalize_result_images,
    normalize_result_images_async,
)
from fuseforks.images.types import DroppedImage, NormalizedImage, ResultImages
from tests.helpers import imagegen as gen


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def five_jpegs() -> list[str]:
    return [b64(gen.jpeg(64 + i, 48, seed=i)) for i in range(5)]


def test_five_images_give_four_kept_and_one_too_many() -> None:
    blocks = five_jpegs()
    result = normalize_result_images(blocks, ENGINE_LIMITS)
    assert [image.data for image in result.kept] == [base64.b64decode(b) for b in blocks[:4]]
    assert [image.width for image in result.kept] == [64, 65, 66, 67]
    assert result.dropped == [
        DroppedImage("too_many", 4, "JPEG", "more than 4 images in one result")
    ]


def test_a_dropped_image_does_not_use_up_one_of_the_four_places() -> None:
    blocks = five_jpegs()
    blocks.insert(1, "broken!")
    blocks.append(b64(gen.encode(gen.photo(8, 8), "GIF")))
    result = normalize_result_images(blocks, ENGINE_LIMITS)
    assert [image.width for image in result.kept] == [64, 65, 66, 67]
    assert [(d.reason, d.index, d.source_format) for d in result.dropped] == [
        ("unreadable", 1, None),
        ("too_many", 5, "JPEG"),
        ("too_many", 6, "GIF"),
    ]


def test_images_after_the_fourth_are_not_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = images_module._normalize

    def counting(data: str | bytes, index: int, *limits: Any) -> NormalizedImage | DroppedImage:
        calls.append(index)
        return real(data, index, *limits)

    monkeypatch.setattr(images_module, "_normalize", counting)
    normalize_result_images(five_jpegs() + five_jpegs(), ENGINE_LIMITS)
    assert calls == [0, 1, 2, 3]


def test_no_images_give_an_empty_result() -> None:
    assert normalize_result_images([], ENGINE_LIMITS) == ResultImages(kept=[], dropped=[])


def test_indices_are_positions_among_the_result_image_blocks() -> None:
    result = normalize_result_images([b64(gen.jpeg(10, 10)), "QUJD", b"8BPS...."], ENGINE_LIMITS)
    assert [(d.reason, d.index) for d in result.dropped] == [
        ("unreadable", 1),
        ("unsupported_format", 2),
    ]
    assert normalize_image("QUJD") == DroppedImage(
        "unreadable", 0, None, "bytes of no known image format"
    )


@pytest.mark.parametrize(
    "blocks",
    [
        [],
        five_jpegs(),
        ["x", "y", *five_jpegs()],
        [b64(gen.encode(gen.photo(300, 200), "PNG")), "QUJD", *five_jpegs()[:2]],
    ],
)
async def test_async_variant_gives_the_same_result(blocks: list[str]) -> None:
    assert await normalize_result_images_async(blocks, ENGINE_LIMITS) == normalize_result_images(
        blocks, ENGINE_LIMITS)


async def test_async_variant_runs_each_image_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []
    barrier = threading.Barrier(4, timeout=10)
    real = images_module._normalize

    def in_thread(data: str | bytes, index: int, *limits: Any) -> NormalizedImage | DroppedImage:
        threads.append(threading.get_ident())
        barrier.wait()  # all four must be running at once, or this times out
        return real(data, index, *limits)

    monkeypatch.setattr(images_module, "_normalize", in_thread)
    monkeypatch.setattr(images_module, "ON_LOOP_MAX", 0)  # none is small enough for the loop
    result = await normalize_result_images_async(five_jpegs(), ENGINE_LIMITS)
    assert len(result.kept) == 4
    assert loop_thread not in threads
    assert len(set(threads)) == 4


async def test_a_small_image_its_header_decides_is_judged_on_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A small JPEG that passes through, or a block refused from its header, costs no worker
    thread; a small image that must be re-encoded still goes to one."""
    threads: list[tuple[int, int]] = []
    real = images_module._normalize

    def in_thread(data: str | bytes, index: int, *limits: Any) -> NormalizedImage | DroppedImage:
        threads.append((index, threading.get_ident()))
        return real(data, index, *limits)

    decoded: list[int] = []
    real_decode = images_module._decode_base64

    def decode(text: str) -> bytes:
        decoded.append(len(text))
        return real_decode(text)

    monkeypatch.setattr(images_module, "_normalize", in_thread)
    monkeypatch.setattr(images_module, "_decode_base64", decode)
    alpha = b64(gen.encode(gen.photo(300, 200).convert("RGBA"), "PNG"))
    blocks = [*five_jpegs()[:2], "QUJD", alpha]
    result = await normalize_result_images_async(blocks, ENGINE_LIMITS)
    assert [index for index, _ in threads] == [3]  # only the PNG to re-encode
    assert threads[0][1] != threading.get_ident()
    assert decoded.count(len(alpha)) == 1  # decoded on the loop, not again in the thread
    monkeypatch.setattr(images_module, "_normalize", real)
    assert result == normalize_result_images(blocks, ENGINE_LIMITS)
    assert [k.path for k in result.kept] == ["pass_through", "pass_through", "re_encoded"]


async def test_async_variant_refills_places_left_by_dropped_images() -> None:
    blocks = ["bad", "bad", *five_jpegs()]
    result = await normalize_result_images_async(blocks, ENGINE_LIMITS)
    assert [image.width for image in result.kept] == [64, 65, 66, 67]
    assert [(d.reason, d.index) for d in result.dropped] == [
        ("unreadable", 0),
        ("unreadable", 1),
        ("too_many", 6),
    ]
