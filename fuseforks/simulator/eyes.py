"""The simulator's eyes: decode an image and name the colours of its left and right halves.

Tests send two-colour images; an answer that names both colours proves the pixels reached the
place where the model reads them, not merely that the request was accepted.
"""

from __future__ import annotations

import io

from PIL import Image, UnidentifiedImageError

PALETTE: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0),
    "white": (255, 255, 255),
    "gray": (128, 128, 128),
    "red": (255, 0, 0),
    "green": (0, 255, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 255, 0),
    "cyan": (0, 255, 255),
    "magenta": (255, 0, 255),
    "orange": (255, 165, 0),
}

MEDIA_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}


def nearest_colour(rgb: tuple[float, float, float]) -> str:
    return min(PALETTE, key=lambda name: sum((a - b) ** 2 for a, b in zip(PALETTE[name], rgb)))


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
