"""The image pipeline under other limits: the same rules with a client's numbers, and a result's
images fitted into a size budget. The engine's own limits are tested everywhere else."""

from __future__ import annotations

import base64
import io

import msgspec
import pytest
from mcp.types import ImageContent
from PIL import Image

from fuseforks.core.media import ENGINE_LIMITS, ImageLimits, base64_size
from fuseforks.images.fit import fit_result_images, images_base64_size
from fuseforks.images.normalize import normalize_image, normalize_result_images
from fuseforks.images.types import DroppedImage, NormalizedImage
from fuseforks.mcp.plan import plan_for_model
from tests.helpers import imagegen as gen

API_LIMITS = ImageLimits(max_edge_px=8000, max_bytes=5 * 1024 * 1024 * 3 // 4)


def kept(outcome: NormalizedImage | DroppedImage) -> NormalizedImage:
    assert isinstance(outcome, NormalizedImage), outcome
    return outcome


def size_of(image: NormalizedImage) -> tuple[int, int]:
    with Image.open(io.BytesIO(image.data)) as opened:
        return opened.size


def test_the_engine_limits_are_the_documented_numbers() -> None:
    assert ImageLimits(max_edge_px=1568, max_bytes=2 * 1024 * 1024,
                                        max_images=4, shrink=False) == ENGINE_LIMITS


def test_a_jpeg_within_a_clients_larger_limits_passes_through() -> None:
    data = gen.jpeg(3000, 2000, quality=80)
    assert kept(normalize_image(data)).path == "re_encoded"  # the engine's 1568 px
    image = kept(normalize_image(data, API_LIMITS))
    assert (image.path, image.data, image.width, image.height) == (
        "pass_through", data, 3000, 2000)


def test_the_long_edge_follows_the_limits() -> None:
    retina = gen.encode(gen.desktop_screenshot(3456, 2234), "PNG")
    image = kept(normalize_image(retina, ImageLimits(max_edge_px=2000)))
    assert (image.width, image.height) == (2000, 1293) == size_of(image)
    engine = kept(normalize_image(retina))
    assert (engine.width, engine.height) == (1568, 1014)


async def test_the_number_of_images_per_result_follows_the_limits_and_its_note_names_it() -> None:
    blocks = [base64.b64encode(gen.jpeg(40, 30, seed=s)).decode() for s in range(3)]
    result = normalize_result_images(blocks, ImageLimits(max_images=2))
    assert [len(result.kept), [(d.index, d.reason, d.detail) for d in result.dropped]] == [
        2, [(2, "too_many", "more than 2 images in one result")]]
    plan = await plan_for_model(
        [ImageContent(type="image", data=b, mime_type="image/jpeg") for b in blocks],
        is_error=False, language="en", limits=ImageLimits(max_images=2))
    output = plan.tool_output()
    assert output.text == ("(2 images)\n(image 3 was not sent: a tool result carries at most 2"
                           " images)")


def test_an_image_over_the_byte_limit_is_dropped_unless_it_may_shrink() -> None:
    data = gen.encode(gen.photo(1200, 800), "PNG")
    tight = ImageLimits(max_bytes=20_000)
    dropped = normalize_image(data, tight)
    assert isinstance(dropped, DroppedImage)
    assert dropped.reason == "too_large"
    assert dropped.detail.startswith("re-encoded JPEG is ") and dropped.detail.endswith(
        " KiB, over 20,000 bytes")
    shrunk = kept(normalize_image(data, msgspec.structs.replace(tight, shrink=True)))
    assert shrunk.size <= 20_000 and shrunk.size == len(shrunk.data)
    assert shrunk.width < 1200 and (shrunk.width, shrunk.height) == size_of(shrunk)
    assert shrunk.path == "re_encoded"


def test_shrinking_never_goes_below_the_smallest_edge() -> None:
    noise = gen.encode(gen.binary_noise(300, 300), "PNG")
    smallest = kept(normalize_image(noise, ImageLimits(max_bytes=500, shrink=True)))
    assert (smallest.width, smallest.height) == (64, 64) and smallest.size <= 500
    outcome = normalize_image(noise, ImageLimits(max_bytes=200, shrink=True))
    assert isinstance(outcome, DroppedImage) and outcome.reason == "too_large"
    assert outcome.detail == "re-encoded WEBP is 1 KiB, over 200 bytes"  # what was last tried


def test_images_within_the_budget_are_left_alone() -> None:
    blocks = [gen.jpeg(300, 200, seed=s) for s in range(2)]
    result = normalize_result_images(blocks, ENGINE_LIMITS)
    assert fit_result_images(blocks, result, ENGINE_LIMITS, 10**9) is result


def test_two_screenshots_are_fitted_into_one_megabyte() -> None:
    blocks = [gen.encode(gen.desktop_screenshot(3840, 2160, seed=1), "PNG"),
              gen.encode(gen.desktop_screenshot(3456, 2234, seed=2), "PNG")]
    limits = ImageLimits(max_edge_px=8000, max_bytes=5 * 1024 * 1024)
    result = normalize_result_images(blocks, limits)
    budget = 1_000_000
    assert images_base64_size(result.kept) > budget
    fitted = fit_result_images(blocks, result, limits, budget)
    assert fitted.dropped == []
    assert len(fitted.kept) == 2 and images_base64_size(fitted.kept) <= budget
    assert all(base64_size(image.size) <= budget // 2 for image in fitted.kept)
    assert [size_of(image) for image in fitted.kept] == [
        (image.width, image.height) for image in fitted.kept]
    first, second = fitted.kept
    assert first.width / first.height == pytest.approx(3840 / 2160, rel=0.01)
    assert second.width / second.height == pytest.approx(3456 / 2234, rel=0.01)


def test_a_small_image_keeps_its_size_and_the_large_one_gets_the_rest() -> None:
    small = gen.jpeg(120, 80)
    large = gen.encode(gen.desktop_screenshot(3840, 2160), "PNG")
    limits = ImageLimits(max_edge_px=8000, max_bytes=5 * 1024 * 1024)
    result = normalize_result_images([small, large], limits)
    budget = 400_000
    fitted = fit_result_images([small, large], result, limits, budget)
    assert fitted.kept[0] == result.kept[0]
    assert base64_size(fitted.kept[1].size) <= budget - base64_size(len(small))


def test_an_image_that_cannot_fit_is_dropped_at_its_own_position() -> None:
    blocks = [b"not an image", gen.encode(gen.desktop_screenshot(1000, 800), "PNG")]
    result = normalize_result_images(blocks, ENGINE_LIMITS)
    fitted = fit_result_images(blocks, result, ENGINE_LIMITS, 40)
    assert fitted.kept == []
    assert [(d.index, d.reason) for d in fitted.dropped] == [(0, "unreadable"), (1, "too_large")]


def test_a_screenshot_over_its_budget_loses_quality_before_it_loses_pixels() -> None:
    """Text stays readable as long as its glyphs keep their pixels: a UI screenshot that must fit
    a byte budget is written as lossy WebP at its full size when some quality fits, and only
    scaled down when none does."""
    shot, _ = gen.screenshot(1280, 3000, seed=3)  # a full page: at 1568 px, small text
    data = gen.encode(shot, "PNG")
    lossless = kept(normalize_image(data, ImageLimits(max_bytes=1_000_000)))
    assert (lossless.width, lossless.height, lossless.data[12:16]) == (669, 1568, b"VP8L")
    assert lossless.size > 75_000
    fitted = kept(normalize_image(data, ImageLimits(max_bytes=75_000, shrink=True)))
    assert (fitted.width, fitted.height, fitted.media_type) == (669, 1568, "image/webp")
    assert fitted.size <= 75_000 and size_of(fitted) == (669, 1568)
    assert fitted.data[12:16] == b"VP8 "  # lossy
    tiny = kept(normalize_image(data, ImageLimits(max_bytes=15_000, shrink=True)))
    assert tiny.width < 669 and tiny.size <= 15_000 and tiny.media_type == "image/webp"


def test_a_photo_over_its_budget_loses_jpeg_quality_before_pixels() -> None:
    data = gen.encode(gen.photo(1200, 800), "PNG")
    at_85 = kept(normalize_image(data))
    assert at_85.media_type == "image/jpeg"
    budget = at_85.size * 3 // 4
    fitted = kept(normalize_image(data, ImageLimits(max_bytes=budget, shrink=True)))
    assert (fitted.width, fitted.height, fitted.media_type) == (1200, 800, "image/jpeg")
    assert fitted.size <= budget


async def test_a_page_shrunk_past_where_its_text_reads_says_so_in_its_note() -> None:
    shot, _ = gen.screenshot(1280, 3000, seed=3)
    data = gen.encode(shot, "PNG")
    assert not kept(normalize_image(data, ImageLimits(max_bytes=75_000, shrink=True))).illegible
    tiny = kept(normalize_image(data, ImageLimits(max_bytes=15_000, shrink=True)))
    assert tiny.illegible
    plan = await plan_for_model(
        [ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type="image/png")],
        is_error=False, language="en", limits=ImageLimits(max_bytes=15_000, shrink=True))
    assert plan.tool_output().text.splitlines()[-1] == (
        "(image 1 had to be made smaller than its text needs to fit the client's size limit:"
        " small text in it may not be readable; ask for a smaller area of it)")
