"""A tall page cut into parts of a screen's shape, the server's own pixels in each; everything
else left whole."""

from __future__ import annotations

import io

import msgspec
from PIL import Image

from fuseforks.core.media import ENGINE_LIMITS, ImageLimits
from fuseforks.images.pages import page_parts
from tests.helpers import imagegen as gen

LIMITS = msgspec.structs.replace(ENGINE_LIMITS, split_pages=True)


def decoded(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as opened:
        assert opened.format == "PNG"
        return opened.convert("RGB")


def test_a_full_page_is_cut_top_to_bottom_into_its_own_pixels() -> None:
    page, _ = gen.screenshot(1280, 3000, seed=1)
    size, parts = page_parts(gen.encode(page, "PNG"), LIMITS, most=4)
    assert size == (1280, 3000) and len(parts) == 2  # no part taller than 1.6 widths
    assert [decoded(p).size for p in parts] == [(1280, 1500), (1280, 1500)]
    assert decoded(parts[0]).tobytes() == page.crop((0, 0, 1280, 1500)).tobytes()
    assert decoded(parts[1]).tobytes() == page.crop((0, 1500, 1280, 3000)).tobytes()


def test_a_longer_page_takes_more_parts_but_no_more_than_the_result_has_room_for() -> None:
    page = gen.encode(gen.screenshot(800, 6000, seed=2)[0], "JPEG", quality=90)
    assert [decoded(p).size for p in page_parts(page, LIMITS, most=8)[1]] == [(800, 1200)] * 5
    assert [decoded(p).size for p in page_parts(page, LIMITS, most=3)[1]] == [(800, 2000)] * 3
    assert page_parts(page, LIMITS, most=1)[1] == []


def test_what_is_no_tall_page_over_the_edge_stays_whole() -> None:
    cases = [
        gen.encode(gen.screenshot(3000, 1280)[0], "PNG"),  # wide
        gen.encode(gen.screenshot(700, 1500)[0], "PNG"),  # tall, within the edge
        gen.encode(gen.screenshot(1280, 2400)[0], "PNG"),  # over the edge, under twice as tall
        gen.encode(gen.screenshot(1280, 3000)[0], "PNG")[:-5000],  # cut short
        b"GIF89a" + b"\x00" * 64,  # not a format a page is cut from
    ]
    assert [page_parts(data, LIMITS, most=4)[1] for data in cases] == [[]] * len(cases)
    exif = Image.Exif()
    exif[0x0112] = 6  # turned a quarter: its stored rows are not its page's rows
    turned = gen.encode(gen.photo(400, 1200), "JPEG", exif=exif.tobytes())
    assert page_parts(turned, LIMITS, most=4)[1] == []
    wider_limit = ImageLimits(max_edge_px=4000, split_pages=True)
    assert page_parts(gen.encode(gen.screenshot(1280, 3000)[0], "PNG"), wider_limit, 4)[1] == []
