"""The simulator's eyes: decode an image and name the colours of its left and right halves.

Tests send two-colour images; an answer that names both colours proves the pixels reached the
place where the model reads them, not merely that the request was accepted.
"""

from __future__ import annotations

import colorsys
import io

from PIL import Image, UnidentifiedImageError

MEDIA_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}


# Hue bands (degrees) for saturated colours, as a person names them: a muted camera green such as
# (40, 170, 70) is "green", not the grey an RGB distance would pick.
_HUES: tuple[tuple[float, str], ...] = (
    (15, "red"), (40, "orange"), (70, "yellow"), (165, "green"), (195, "cyan"),
    (255, "blue"), (345, "magenta"), (360, "red"),
)


def nearest_colour(rgb: tuple[float, float, float]) -> str:
    hue, saturation, value = colorsys.rgb_to_hsv(*(channel / 255 for channel in rgb))
    if value < 0.2:
        return "black"
    if saturation < 0.25:
        return "white" if value > 0.85 else "gray"
    degrees = hue * 360
    return next(name for limit, name in _HUES if degrees < limit)


def _mean(image: Image.Image) -> tuple[float, float, float]:
    small = image.resize((1, 1), Image.Resampling.BOX)
    r, g, b = small.getpixel((0, 0))  # type: ignore[misc]
    return (r, g, b)


def media_type_of(data: bytes) -> str | None:
    """The media type the bytes really are (None when Pillow cannot identify them)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return MEDIA_FORMATS.get(image.format or "")
    except (UnidentifiedImageError, OSError):
        return None


def describe(data: bytes) -> str:
    """`left half green, right half magenta` (or `solid green`), or `unreadable`."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            rgb = image.convert("RGB")
    except (UnidentifiedImageError, OSError):
        return "unreadable"
    width, height = rgb.size
    half = max(width // 2, 1)
    left = nearest_colour(_mean(rgb.crop((0, 0, half, height))))
    right = nearest_colour(_mean(rgb.crop((width - half, 0, width, height))))
    if left == right:
        return f"solid {left}"
    return f"left half {left}, right half {right}"


def answer_about(images: list[bytes]) -> str:
    """The sighted model's answer about the images of the latest tool results."""
    if not images:
        return "I received the tool result; it has no image."
    noun = "image" if len(images) == 1 else "images"
    seen = "; ".join(f"image {n}: {describe(data)}" for n, data in enumerate(images, 1))
    return f"I see {len(images)} {noun}. {seen}."
