"""The normalization rules of `normalize_image`, each with its boundary, over images generated in
code (the rules: docs/image-rules.md)."""

from __future__ import annotations

import base64
import hashlib
import inspect
import io

import pytest
from PIL import Image

import fuseforks
from fuseforks.images import normalize as images_module
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import DroppedImage, NormalizedImage
from tests.helpers import imagegen as gen

MIB = 1024 * 1024


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def kept(result: NormalizedImage | DroppedImage) -> NormalizedImage:
    assert isinstance(result, NormalizedImage), result
    return result


def dropped(result: NormalizedImage | DroppedImage) -> DroppedImage:
    assert isinstance(result, DroppedImage), result
    return result


def decoded(image: NormalizedImage) -> Image.Image:
    im = Image.open(io.BytesIO(image.data))
    im.load()
    return im


def test_exported_from_the_package_root() -> None:
    assert fuseforks.normalize_image is normalize_image
    assert "normalize_image" in fuseforks.__all__


def test_jpeg_within_limits_passes_through_byte_for_byte_from_base64() -> None:
    source = gen.jpeg(1568, 1176)
    result = kept(normalize_image(b64(source)))
    assert result.data == source
    assert (result.path, result.media_type, result.source_format) == (
        "pass_through",
        "image/jpeg",
        "JPEG",
    )
    assert (result.width, result.height) == (1568, 1176)
    assert result.size == result.source_size == len(source)
    assert result.digest == hashlib.sha256(source).hexdigest()


def test_raw_bytes_are_accepted_like_base64() -> None:
    source = gen.jpeg(640, 424)
    assert normalize_image(source) == normalize_image(b64(source))


def test_long_edge_1568_passes_and_1569_is_re_encoded_to_1568() -> None:
    at_limit = kept(normalize_image(gen.jpeg(800, 1568)))
    over = kept(normalize_image(gen.jpeg(800, 1569)))
    assert (at_limit.path, at_limit.width, at_limit.height) == ("pass_through", 800, 1568)
    assert (over.path, over.width, over.height) == ("re_encoded", 799, 1568)
    assert decoded(over).size == (799, 1568)
    assert over.media_type == "image/jpeg"


def test_two_mib_exactly_passes_and_one_byte_more_is_re_encoded() -> None:
    source = gen.jpeg(1568, 1200, quality=95)
    exact = gen.pad_jpeg(source, 2 * MIB)
    over = gen.pad_jpeg(source, 2 * MIB + 1)
    at_limit = kept(normalize_image(exact))
    assert (at_limit.path, at_limit.size, at_limit.data == exact) == ("pass_through", 2 * MIB, True)
    reencoded = kept(normalize_image(over))
    assert reencoded.path == "re_encoded"
    assert reencoded.source_size == 2 * MIB + 1
    assert reencoded.size < 2 * MIB
    assert (reencoded.width, reencoded.height) == (1568, 1200)


def test_re_encoding_never_upscales_and_keeps_aspect() -> None:
    small_png = gen.encode(gen.photo(300, 200), "PNG", pnginfo=gen.png_text_over(256 * 1024))
    result = kept(normalize_image(small_png))
    assert (result.path, result.width, result.height) == ("re_encoded", 300, 200)
    wide = kept(normalize_image(gen.encode(gen.photo(4000, 1000), "PNG")))
    assert (wide.width, wide.height) == (1568, 392)


def test_still_over_two_mib_after_re_encoding_is_too_large() -> None:
    noise = gen.encode(gen.full_noise(1568, 1568), "PNG")
    result = dropped(normalize_image(noise))
    assert (result.reason, result.source_format) == ("too_large", "PNG")
    assert result.detail.startswith("re-encoded JPEG is ")


def test_declared_edge_16384_is_decoded_and_16385_is_dropped_without_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at_limit = kept(normalize_image(gen.encode(gen.solid(16384, 4, (10, 200, 30)), "PNG")))
    assert (at_limit.path, at_limit.width, at_limit.height) == ("re_encoded", 1568, 1)

    def must_not_decode(*args: object) -> object:
        raise AssertionError("decoded an image that declares an edge over 16,384 px")

    monkeypatch.setattr(images_module, "reencode", must_not_decode)
    jpeg_over = gen.with_jpeg_frame_size(gen.jpeg(64, 64), 16385, 64)
    png_over = gen.png_declaring(64, 16385)
    for data, fmt in ((jpeg_over, "JPEG"), (png_over, "PNG")):
        result = dropped(normalize_image(data))
        assert (result.reason, result.source_format) == ("too_large", fmt)


def test_bomb_declaring_100000_px_is_too_large() -> None:
    result = dropped(normalize_image(b64(gen.png_declaring(100_000, 100_000))))
    assert result == DroppedImage(
        reason="too_large",
        index=0,
        source_format="PNG",
        detail="declares 100000x100000 px, over 16384 px",
    )


def test_base64_over_the_input_cap_is_too_large_before_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(images_module, "INPUT_MAX_BYTES", 3000)
    at_cap = b64(gen.encode(gen.solid(8, 8, (1, 2, 3)), "PNG") + b"\x00" * 3000)[:4000]
    assert len(at_cap) // 4 * 3 == 3000
    assert kept(normalize_image(at_cap)).source_size == 3000
    # Not even valid base64: proves the size is judged before any decoding.
    over = "!" * 4004
    result = dropped(normalize_image(over))
    assert (result.reason, result.detail) == (
        "too_large",
        "base64 input over the input cap of 3,000 bytes",
    )
    assert dropped(normalize_image(b"\xff\xd8\xff" + b"\x00" * 3001)).reason == "too_large"


def test_png_is_re_encoded_and_transparency_becomes_white() -> None:
    im = gen.solid(40, 30, (200, 0, 0, 255), mode="RGBA")
    im.paste((0, 0, 0, 0), (0, 0, 20, 30))  # left half fully transparent black
    result = kept(normalize_image(gen.encode(im, "PNG")))
    assert (result.path, result.media_type, result.source_format) == (
        "re_encoded",
        "image/webp",  # two colours: a graphic, sent lossless
        "PNG",
    )
    out = decoded(result)
    assert out.format == "WEBP"
    assert out.mode == "RGB"
    assert all(abs(a - b) <= 3 for a, b in zip(out.getpixel((2, 15)), (255, 255, 255), strict=True))
    assert all(abs(a - b) <= 6 for a, b in zip(out.getpixel((37, 15)), (200, 0, 0), strict=True))


def test_still_webp_passes_through_with_its_transparency() -> None:
    im = gen.solid(64, 64, (0, 128, 255, 0), mode="RGBA")
    source = gen.encode(im, "WEBP", lossless=True)
    result = kept(normalize_image(source))
    assert (result.path, result.media_type, result.data) == ("pass_through", "image/webp", source)
    lossy = gen.encode(gen.photo(1568, 900), "WEBP", quality=80)
    assert kept(normalize_image(lossy)).path == "pass_through"


def test_webp_over_the_edge_limit_is_re_encoded_to_jpeg() -> None:
    result = kept(normalize_image(gen.encode(gen.photo(1569, 100), "WEBP", quality=80)))
    assert (result.path, result.media_type, result.width, result.height) == (
        "re_encoded",
        "image/jpeg",
        1568,
        100,
    )


def test_animated_webp_is_re_encoded_from_its_first_frame() -> None:
    source = gen.animated_webp(64, 48, [(255, 0, 0), (0, 0, 255)])
    result = kept(normalize_image(source))
    assert (result.path, result.media_type, result.source_format, result.frames) == (
        "re_encoded",
        "image/webp",
        "WEBP",
        2,
    )
    red, green, blue = decoded(result).getpixel((32, 24))
    assert red > 240 and green < 15 and blue < 15


def test_format_comes_from_the_bytes_and_no_mime_type_is_taken() -> None:
    # The API has no place for the server's mimeType: a JPEG labelled image/png is a JPEG.
    assert list(inspect.signature(normalize_image).parameters) == ["data", "limits"]
    jpeg_named_png = gen.jpeg(200, 100)
    result = kept(normalize_image(jpeg_named_png))
    assert (result.media_type, result.source_format) == ("image/jpeg", "JPEG")
    png = kept(normalize_image(gen.encode(gen.photo(200, 100), "PNG")))
    assert (png.source_format, png.media_type) == ("PNG", "image/png")


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("PCX", None), ("PPM", None), ("JPEG2000", "JPEG2000"), ("QOI", "QOI"), ("DDS", "DDS")],
)
def test_formats_that_are_not_carried(fmt: str, name: str | None) -> None:
    result = dropped(normalize_image(gen.encode(gen.photo(32, 32), fmt)))
    if name is None:  # recognized by Pillow, but not a format we name: unreadable, not guessed
        assert (result.reason, result.source_format) == ("unreadable", None)
    else:
        assert (result.reason, result.source_format) == ("unsupported_format", name)


@pytest.mark.parametrize(
    "data",
    [
        "not base64 at all!",
        "QUJD",  # "ABC": valid base64, not an image
        "QUJ",  # missing padding
        "QU=JD",  # padding in the middle
        "",
        "ÿØÿ",  # not ASCII
    ],
)
def test_broken_base64_and_non_images_are_unreadable(data: str) -> None:
    assert dropped(normalize_image(data)).reason == "unreadable"


@pytest.mark.parametrize("junk", ["*", "-", "_", "A=", "\u00e9"])
def test_base64_with_foreign_characters_is_broken_even_if_a_lenient_decoder_would_guess(
    junk: str,
) -> None:
    text = b64(gen.jpeg(64, 64))
    damaged = text[:100] + junk + text[100:]
    assert dropped(normalize_image(damaged)) == DroppedImage("unreadable", 0, None, "broken base64")


def test_base64_with_line_breaks_is_accepted() -> None:
    source = gen.jpeg(64, 64)
    wrapped = base64.encodebytes(source).decode("ascii")
    assert "\n" in wrapped
    assert kept(normalize_image(wrapped)).data == source


def test_large_base64_decodes_whole_and_padding_inside_it_is_broken() -> None:
    source = gen.encode(gen.binary_noise(1000, 1000), "JPEG", quality=85)
    text = b64(source)
    assert len(text) > images_module._BASE64_SLICE  # decoded in slices
    assert kept(normalize_image(text)).data == source
    slice_chars = images_module._BASE64_SLICE
    padded_inside = text[: slice_chars - 4] + "QQ==" + text[slice_chars:]
    assert dropped(normalize_image(padded_inside)).detail == "broken base64"


def test_random_bytes_are_unreadable() -> None:
    import random

    noise = random.Random(7).randbytes(5000)
    assert dropped(normalize_image(noise)) == DroppedImage(
        "unreadable", 0, None, "bytes of no known image format"
    )


def test_truncated_jpeg_is_never_passed_through() -> None:
    source = gen.jpeg(800, 600)
    for cut in (len(source) // 2, len(source) - 2):
        result = dropped(normalize_image(source[:cut]))
        assert (result.reason, result.source_format) == ("unreadable", "JPEG")


def test_jpeg_cut_inside_its_headers_is_unreadable() -> None:
    source = gen.jpeg(800, 600)
    assert dropped(normalize_image(source[:40])).reason == "unreadable"


def test_jpeg_the_header_walk_refuses_is_left_to_the_decoder() -> None:
    # Stray bytes between segments: strict for pass-through, but libjpeg reads the picture.
    result = kept(normalize_image(gen.with_stray_bytes_after_app0(gen.jpeg(300, 200))))
    assert (result.path, result.width, result.height) == ("re_encoded", 300, 200)


def test_the_decoder_path_keeps_the_edge_limit_before_decoding() -> None:
    big = gen.with_jpeg_frame_size(gen.jpeg(64, 64), 16385, 64)
    result = dropped(normalize_image(gen.with_stray_bytes_after_app0(big)))
    assert (result.reason, result.detail) == ("too_large", "declares 16385x64 px, over 16384 px")


def test_repr_of_a_kept_image_never_shows_its_bytes() -> None:
    result = kept(normalize_image(gen.jpeg(64, 48)))
    assert repr(result) == (
        f"NormalizedImage(data=<{result.size} bytes>, media_type='image/jpeg', width=64,"
        f" height=48, size={result.size}, digest='{result.digest}', path='pass_through',"
        f" source_format='JPEG', source_size={result.size}, frames=1, source_width=64,"
        f" source_height=48, illegible=False)"
    )


def test_truncated_webp_is_never_passed_through() -> None:
    source = gen.encode(gen.photo(300, 200), "WEBP", quality=80)
    result = dropped(normalize_image(source[: len(source) * 2 // 3]))
    assert (result.reason, result.source_format) == ("unreadable", "WEBP")


def test_digest_is_of_the_bytes_sent_on_both_paths() -> None:
    passed = kept(normalize_image(gen.jpeg(100, 100)))
    source = gen.encode(gen.photo(1600, 100), "PNG")
    reencoded = kept(normalize_image(source))
    assert (passed.path, reencoded.path) == ("pass_through", "re_encoded")
    for image in (passed, reencoded):
        assert image.digest == hashlib.sha256(image.data).hexdigest()
        assert image.size == len(image.data)
    assert reencoded.digest != hashlib.sha256(source).hexdigest()


def test_same_input_always_gives_the_same_digest() -> None:
    png = gen.encode(gen.photo(2000, 1500), "PNG")
    assert kept(normalize_image(png)).digest == kept(normalize_image(png)).digest


def test_drop_details_never_carry_image_bytes() -> None:
    source = gen.jpeg(64, 64)
    for data in (source[:300], b"GIF89a" + source, b64(source)[:-7] + "!"):
        result = dropped(normalize_image(data))
        assert len(result.detail) < 80
        assert b64(source)[:16] not in result.detail
