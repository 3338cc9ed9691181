"""Real-world inputs on the re-encode path: orientation, colour modes, damaged ancillary chunks."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image, ImageCms

from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import DroppedImage, NormalizedImage
from tests.helpers import imagegen as gen

WHITE = (255, 255, 255)


def kept(result: NormalizedImage | DroppedImage) -> NormalizedImage:
    assert isinstance(result, NormalizedImage), result
    return result


def pixels(image: NormalizedImage) -> Image.Image:
    """The pixels sent: JPEG for a photo, lossless WebP for a graphic (both RGB)."""
    im = Image.open(io.BytesIO(image.data))
    assert (im.format, im.mode) == ({"image/jpeg": "JPEG", "image/webp": "WEBP"}[image.media_type],
                                    "RGB")
    return im


def close(actual: tuple[int, ...], expected: tuple[int, ...], tolerance: int = 6) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected, strict=True))


def quadrants(width: int, height: int) -> Image.Image:
    """Red top-left, green top-right, blue bottom-left, white bottom-right."""
    im = Image.new("RGB", (width, height), WHITE)
    im.paste((255, 0, 0), (0, 0, width // 2, height // 2))
    im.paste((0, 255, 0), (width // 2, 0, width, height // 2))
    im.paste((0, 0, 255), (0, height // 2, width // 2, height))
    return im


_ORIENTED = {
    1: None,
    3: Image.Transpose.ROTATE_180,
    6: Image.Transpose.ROTATE_270,  # EXIF 6: the camera was turned; display rotated 90° clockwise
    8: Image.Transpose.ROTATE_90,
}


@pytest.mark.parametrize("orientation", sorted(_ORIENTED))
def test_exif_orientation_is_applied_on_re_encode(orientation: int) -> None:
    source = quadrants(2000, 1000)
    data = gen.encode(source, "JPEG", quality=95, exif=gen.exif_with_orientation(orientation))
    step = _ORIENTED[orientation]
    expected = source if step is None else source.transpose(step)
    result = kept(normalize_image(data))
    assert result.path == "re_encoded"
    out = pixels(result)
    assert out.size == (result.width, result.height)
    assert out.size == ((1568, 784) if orientation in (1, 3) else (784, 1568))
    scaled = expected.resize(out.size)
    for x, y in ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)):
        point = (int(out.width * x), int(out.height * y))
        assert close(out.getpixel(point), scaled.getpixel(point), 8), (orientation, point)


def test_pass_through_keeps_the_orientation_tag_untouched() -> None:
    data = gen.encode(quadrants(400, 200), "JPEG", exif=gen.exif_with_orientation(6))
    result = kept(normalize_image(data))
    assert (result.path, result.data, result.width, result.height) == (
        "pass_through",
        data,
        400,
        200,
    )


def test_cmyk_jpeg_is_converted_to_rgb() -> None:
    cmyk = Image.new("CMYK", (1600, 100), (0, 255, 255, 0))  # pure red in CMYK
    data = gen.encode(cmyk, "JPEG", quality=95)
    assert Image.open(io.BytesIO(data)).mode == "CMYK"
    result = kept(normalize_image(data))
    assert close(pixels(result).getpixel((800, 50)), (255, 0, 0), 8)


def test_cmyk_jpeg_with_an_unusable_profile_falls_back_to_the_plain_formula() -> None:
    # An RGB profile on a CMYK image cannot drive the conversion; it must not cost the picture.
    cmyk = Image.new("CMYK", (1600, 100), (0, 0, 255, 0))  # yellow
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = gen.encode(cmyk, "JPEG", quality=95, icc_profile=srgb)
    result = kept(normalize_image(data))
    assert close(pixels(result).getpixel((800, 50)), (255, 255, 0), 8)


def test_grayscale_jpeg_becomes_rgb_grey() -> None:
    data = gen.encode(Image.new("L", (1600, 80), 100), "JPEG", quality=95)
    result = kept(normalize_image(data))
    assert close(pixels(result).getpixel((10, 10)), (100, 100, 100), 3)


def test_palette_png_with_transparency_is_flattened_on_white() -> None:
    im = Image.new("P", (40, 20), 1)
    im.putpalette([0, 0, 0] + [0, 0, 200] + [0] * 762)
    im.paste(0, (0, 0, 20, 20))
    data = gen.encode(im, "PNG", transparency=0)
    out = pixels(kept(normalize_image(data)))
    assert close(out.getpixel((5, 10)), WHITE)
    assert close(out.getpixel((35, 10)), (0, 0, 200), 8)


def test_grey_alpha_png_is_flattened_on_white() -> None:
    im = Image.new("LA", (40, 20), (0, 255))
    im.paste((0, 0), (0, 0, 20, 20))
    out = pixels(kept(normalize_image(gen.encode(im, "PNG"))))
    assert close(out.getpixel((5, 10)), WHITE)
    assert close(out.getpixel((35, 10)), (0, 0, 0))


def test_half_transparent_pixels_blend_with_white() -> None:
    im = Image.new("RGBA", (20, 20), (0, 0, 0, 128))
    out = pixels(kept(normalize_image(gen.encode(im, "PNG"))))
    assert close(out.getpixel((10, 10)), (127, 127, 127), 3)


def test_sixteen_bit_grey_png_is_scaled_not_clipped() -> None:
    row = struct.pack("<32H", *[32768] * 32) + struct.pack("<32H", *[65535] * 32)
    im = Image.frombytes("I;16", (64, 8), row * 8)  # left mid grey, right white, in 16 bit
    data = gen.encode(im, "PNG")
    assert Image.open(io.BytesIO(data)).mode == "I;16"
    out = pixels(kept(normalize_image(data)))
    assert close(out.getpixel((8, 4)), (128, 128, 128), 3)
    assert close(out.getpixel((56, 4)), WHITE, 3)


def test_sixteen_bit_rgb_png_keeps_its_colours() -> None:
    # Pillow cannot write 48-bit PNGs; build one: IHDR bit depth 16, colour type 2.
    row = b"\x00" + (b"\xff\xff\x00\x00\x80\x00") * 8  # red = 65535, green = 0, blue = 32768
    data = (
        b"\x89PNG\r\n\x1a\n"
        + gen.png_chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 4, 16, 2, 0, 0, 0))
        + gen.png_chunk(b"IDAT", zlib.compress(row * 4))
        + gen.png_chunk(b"IEND", b"")
    )
    out = pixels(kept(normalize_image(data)))
    assert close(out.getpixel((4, 2)), (255, 0, 128), 8)


def test_png_with_a_damaged_colour_profile_crc_is_kept() -> None:
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    good = gen.encode(Image.new("RGB", (30, 20), (0, 150, 0)), "PNG", icc_profile=srgb)
    damaged = gen.corrupt_png_chunk_crc(good, b"iCCP")
    assert damaged != good  # the profile chunk's CRC no longer matches
    out = pixels(kept(normalize_image(damaged)))
    assert close(out.getpixel((15, 10)), (0, 150, 0), 6)


def test_png_with_a_damaged_critical_chunk_is_unreadable() -> None:
    good = gen.encode(Image.new("RGB", (30, 20), (0, 150, 0)), "PNG")
    result = normalize_image(gen.corrupt_png_chunk_crc(good, b"IHDR"))
    assert isinstance(result, DroppedImage)
    assert (result.reason, result.source_format) == ("unreadable", "PNG")


def test_truncated_png_is_unreadable() -> None:
    good = gen.encode(gen.photo(200, 150), "PNG")
    result = normalize_image(good[: len(good) // 2])
    assert isinstance(result, DroppedImage)
    assert (result.reason, result.source_format) == ("unreadable", "PNG")


def test_pixels_under_a_wide_rgb_profile_are_converted_to_srgb() -> None:
    # Model pipelines ignore embedded profiles: the numbers must already mean sRGB colours.
    icc = gen.swapped_primaries_icc()
    data = gen.encode(Image.new("RGB", (20, 20), (255, 0, 0)), "PNG", icc_profile=icc)
    out = pixels(kept(normalize_image(data)))
    assert close(out.getpixel((10, 10)), (0, 255, 0), 6)


def test_an_srgb_profile_leaves_the_numbers_alone() -> None:
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = gen.encode(Image.new("RGB", (20, 20), (200, 50, 50)), "PNG", icc_profile=srgb)
    out = pixels(kept(normalize_image(data)))
    assert close(out.getpixel((10, 10)), (200, 50, 50), 4)
