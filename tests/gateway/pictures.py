"""The pictures of the screenshot server, built in code: the same bytes in the server and in the
tests that check what the gateway made of them."""

from __future__ import annotations

import functools

from tests.helpers import imagegen as gen

SCREEN_SIZE = (3840, 2160)
RETINA_SIZE = (3456, 2234)
SMALL_SIZE = (640, 400)


@functools.cache
def screen_png() -> bytes:
    return gen.encode(gen.desktop_screenshot(*SCREEN_SIZE, seed=4), "PNG")


@functools.cache
def retina_png() -> bytes:
    return gen.encode(gen.desktop_screenshot(*RETINA_SIZE, seed=5), "PNG")


@functools.cache
def small_jpeg() -> bytes:
    return gen.encode(gen.photo(*SMALL_SIZE, seed=6), "JPEG", quality=85)


PHOTO_SIZE = (4000, 3000)


@functools.cache
def photo_png() -> bytes:
    """A 4000x3000 PNG (a camera's size): over every client's limits, in a blob or a resource."""
    return gen.encode(gen.desktop_screenshot(*PHOTO_SIZE, seed=7), "PNG")


@functools.cache
def tiny_png() -> bytes:
    return gen.encode(gen.photo(200, 100, seed=8), "PNG")


BIG_PHOTO_SIZE = (3136, 1960)


@functools.cache
def big_photo_jpeg() -> bytes:
    """A 3136x1960 JPEG photo: twice the engine's long edge, and quick to build."""
    return gen.encode(gen.photo(*BIG_PHOTO_SIZE, seed=9), "JPEG", quality=85)


UI_SIZE = (2560, 1600)


@functools.cache
def ui_png() -> bytes:
    """A 2560x1600 UI screenshot with text at 2x, as PNG: a graphic, sent without loss."""
    return gen.encode(gen.screenshot(*UI_SIZE, seed=2, scale=2.0)[0], "PNG")


@functools.cache
def ui_webp() -> bytes:
    """A 1568x980 UI screenshot as lossless WebP, as a server may send it: within the engine's
    limits, so it passes as it came unless a client cannot carry WebP."""
    return gen.encode(gen.screenshot(1568, 980, seed=3)[0], "WEBP", lossless=True)


PAGE_SIZE = (1280, 3000)


@functools.cache
def page_png() -> bytes:
    """A full-page screenshot: 1280x3000, 15 px text, over twice as tall as it is wide."""
    return gen.encode(gen.screenshot(*PAGE_SIZE, seed=4)[0], "PNG")
