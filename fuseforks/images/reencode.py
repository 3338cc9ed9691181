"""The re-encode path: decode, shrink the long edge to 1568, flatten on white, then encode as
`fuseforks.images.encoding_choice` decides (lossless WebP for a graphic, JPEG quality 85 for a
photo).

The first frame of an animation (GIF, APNG, WebP, AVIF), the first page of a TIFF and the largest
image of an ICO are what is decoded; how many frames or pages there were is returned, so the
model can be told.

Before anything is decoded, the decode budget (`DECODE_MAX_PIXELS`, half of it for WebP and AVIF) is
checked against the pixels the decoder would produce (`decoded_size`: a JPEG at its reduced
`draft` scale, every other format in full), so memory stays bounded for every accepted input.

Order matters for speed: a JPEG is asked for a reduced-scale decode (`draft`) with the
aspect-correct target before any pixel is decoded; transparency is flattened on white after the
whole-factor box reduce (compositing on a constant colour commutes with a linear filter on
premultiplied pixels, so the result is the same); the EXIF orientation and the colour profile are
applied last, on the small image.
"""

from __future__ import annotations

import io
from typing import NamedTuple

from PIL import Image, ImageChops, ImageCms

from fuseforks.core.media import DECODE_MAX_EDGE_PX, MAX_EDGE_PX, ImageLimits, target_size
from fuseforks.images.encoding_choice import encode_for_model
from fuseforks.images.formats import decode_budget
from fuseforks.images.probe import damaged_ancillary_png_chunks
from fuseforks.images.within_budget import fit_legibly

# Pillow refuses (or warns about) images above MAX_IMAGE_PIXELS in Image.open. Our own guard
# (no edge over 16,384 px, checked from the header before Pillow sees the bytes) is the limit we
# document, so Pillow's must not be stricter than it: otherwise a legal 16,000 x 12,000 JPEG, which
# `draft` decodes at 1/8 scale, would be refused. Raised, never lowered, once at import.
_DECODE_MAX_PIXELS = DECODE_MAX_EDGE_PX * DECODE_MAX_EDGE_PX
if Image.MAX_IMAGE_PIXELS is not None and Image.MAX_IMAGE_PIXELS < _DECODE_MAX_PIXELS:
    Image.MAX_IMAGE_PIXELS = _DECODE_MAX_PIXELS

_ORIENTATION_TAG = 0x0112
_TRANSPOSE: dict[int, tuple[Image.Transpose, ...]] = {
    2: (Image.Transpose.FLIP_LEFT_RIGHT,),
    3: (Image.Transpose.ROTATE_180,),
    4: (Image.Transpose.FLIP_TOP_BOTTOM,),
    5: (Image.Transpose.TRANSPOSE,),
    6: (Image.Transpose.ROTATE_270,),
    7: (Image.Transpose.TRANSVERSE,),
    8: (Image.Transpose.ROTATE_90,),
}
_SWAPS_AXES = frozenset({5, 6, 7, 8})
"""Orientations whose transpose turns the picture a quarter: width and height trade places."""
_ALPHA_MODES = frozenset({"RGBA", "LA", "PA", "RGBa", "La"})
_SRGB = ImageCms.createProfile("sRGB")


def drop_damaged_ancillary_chunks(data: bytes) -> bytes:
    """The PNG without ancillary chunks whose CRC is wrong (a damaged iCCP is common in the wild).

    Pillow rejects any bad CRC unless told to load truncated images, which would also let a cut
    file through. Removing only the damaged optional chunks keeps both rules: a broken colour
    profile no longer costs the picture, and a broken critical chunk (IHDR, IDAT...) still fails.
    """
    damaged = damaged_ancillary_png_chunks(data)
    if not damaged:
        return data
    parts = []
    cursor = 0
    for start, end in damaged:
        parts.append(data[cursor:start])
        cursor = end
    parts.append(data[cursor:])
    return b"".join(parts)


class DeclaredTooLarge(ValueError):
    """The decoder's header declares an edge over the limit; nothing was decoded."""


def decoded_size(fmt: str, width: int, height: int,
                 max_edge: int = MAX_EDGE_PX) -> tuple[int, int]:
    """The size the decoder produces for an image declared `width` x `height`: a JPEG decodes at
    the reduced scale (1/2, 1/4 or 1/8) that still covers the sent size (`draft`); the other
    decoders have no reduced scale and produce every declared pixel."""
    if fmt != "JPEG":
        return width, height
    target_width, target_height = target_size(width, height, max_edge)
    fits = min(width // target_width, height // target_height)
    scale = next(s for s in (8, 4, 2, 1) if fits >= s)  # as Pillow's JpegImageFile.draft picks
    return -(-width // scale), -(-height // scale)


def over_decode_budget(fmt: str, width: int, height: int,
                       max_edge: int = MAX_EDGE_PX) -> str | None:
    """Why decoding this image would need more memory than fuseforks allows, or None."""
    w, h = decoded_size(fmt, width, height, max_edge)
    budget = decode_budget(fmt)
    if w * h <= budget:
        return None
    return (
        f"declares {width}x{height} px = {width * height / 1e6:.1f} MP, over the decode budget"
        f" of {budget // 1_000_000} MP for {fmt}"
    )


class Reencoded(NamedTuple):
    data: bytes
    width: int
    height: int
    media_type: str
    frames: int
    """Frames (or pages) the source had; only the first is sent."""
    source_width: int
    source_height: int
    """The source's size as it is seen (EXIF orientation applied), before any scaling."""
    illegible: bool = False
    """Shrunk to fit `max_bytes` below the size its text needs to be read."""


def reencode(data: bytes, fmt: str, limits: ImageLimits) -> Reencoded:
    """The bytes to send, their size and type. Raises on anything Pillow cannot decode whole.

    The long edge is scaled to `limits.max_edge_px` (or less, to keep the short edge within
    `limits.max_short_edge_px`); with `limits.shrink`, an image still over
    `limits.max_bytes` is written again, quality before scale, until it fits
    (`fuseforks.images.within_budget`). Memory: each full-size
    intermediate is released as soon as the next one exists, so the peak is two full-size
    buffers at most (the decoded image and one converted copy)."""
    if fmt == "PNG":
        data = drop_damaged_ancillary_chunks(data)
    with Image.open(io.BytesIO(data), formats=[fmt]) as opened:
        im: Image.Image = opened
        width, height = im.size
        max_edge = limits.edge_for(width, height)
        if max(width, height) > DECODE_MAX_EDGE_PX:
            raise DeclaredTooLarge(f"declares {width}x{height} px, over {DECODE_MAX_EDGE_PX} px")
        budget = over_decode_budget(fmt, width, height, max_edge)
        if budget is not None:
            raise DeclaredTooLarge(budget)
        frames = getattr(im, "n_frames", 1)
        source = im.size
        if frames > 1:
            im.seek(0)  # animated or paged: the first frame only
        size = target_size(*im.size, max_edge)
        if fmt == "JPEG" and size != im.size:
            im.draft(None, size)
        im.load()
        orientation = _orientation(im)
        if orientation in _SWAPS_AXES:
            source = source[1], source[0]
        icc = im.info.get("icc_profile")
        cmyk = im.mode == "CMYK"
        full = _to_rgb_l_or_rgba(im, icc)
        if full is not im:
            im.close()  # the decoded pixels are no longer needed: only the converted copy is
        small = _shrink_on_white(full, size)
        rgb = small if small.mode == "RGB" else small.convert("RGB")
        for step in _TRANSPOSE.get(orientation, ()):
            rgb = rgb.transpose(step)
        if icc and not cmyk:
            rgb = _to_srgb(rgb, icc)
    encoded = encode_for_model(rgb, limits.max_bytes, limits.webp)
    width, height = rgb.size
    legible = True
    if limits.shrink and len(encoded.data) > limits.max_bytes:
        encoded, width, height, legible = fit_legibly(rgb, limits.max_bytes, limits.webp)
    return Reencoded(encoded.data, width, height, encoded.media_type, frames, *source,
                     illegible=not legible)


def _orientation(im: Image.Image) -> int:
    try:
        value = im.getexif().get(_ORIENTATION_TAG, 1)
    except Exception:  # a damaged EXIF block must not cost the picture
        return 1
    return value if isinstance(value, int) else 1


def _to_srgb(rgb: Image.Image, icc: bytes) -> Image.Image:
    """Pixels in sRGB, because model pipelines ignore embedded profiles (Display P3 screenshots).

    Done after the resize, on the small image. A profile that is already sRGB, is not an RGB
    profile, or cannot be parsed leaves the pixels as they are.
    """
    try:
        source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        if source.profile.xcolor_space.strip() != "RGB":
            return rgb
        if "srgb" in (source.profile.profile_description or "").lower():
            return rgb
        converted = ImageCms.profileToProfile(rgb, source, _SRGB, outputMode="RGB")
    except (ImageCms.PyCMSError, OSError, ValueError, TypeError):
        return rgb
    return converted if converted is not None else rgb


def _shrink_on_white(im: Image.Image, size: tuple[int, int]) -> Image.Image:
    """RGB (or L for grey) at `size`: box-reduce by the largest whole factor that stays above it,
    then LANCZOS or bilinear. Takes `im` over: it is closed once a smaller copy exists.

    A scale of less than two in one step is LANCZOS, not bilinear: small text keeps its strokes
    (a 1280x3000 page at 1568 px read 0.45 in tesseract against 0.37 bilinear,
    `benchmarks/bench_legibility.py`), for about 25 ms more on a 2000x1500 step. After a box
    reduce the rest of the way is bilinear: the box already averaged, and the RGBA path keeps
    its speed (`bench_images`).

    With transparency, everything after one full-size pass runs on the reduced image: the box
    reduce works on premultiplied pixels ("RGBa", where a box average is exact), and flattening
    a premultiplied pixel on white is `p + (255 - alpha)` per channel, so it never needs dividing
    back. Against a full-size flatten and a LANCZOS resize the result stays above 49 dB PSNR on
    photos, at about half the time. Grey stays one channel until the end (replicating it into RGB
    commutes with the resize), a quarter of the memory of RGB.
    """
    factor = min(im.width // size[0], im.height // size[1])
    if im.mode == "RGBA":
        premultiplied = im.convert("RGBa")
        im.close()
        if factor >= 2:
            reduced = premultiplied.reduce(factor)
            premultiplied.close()
            premultiplied = reduced
        red, green, blue, alpha = premultiplied.split()
        white_left = ImageChops.invert(alpha)
        im = Image.merge("RGB", [ImageChops.add(band, white_left) for band in (red, green, blue)])
    elif factor >= 2:
        reduced = im.reduce(factor)
        im.close()
        im = reduced
    if im.size == size:
        return im
    return im.resize(size, Image.Resampling.LANCZOS if factor < 2 else Image.Resampling.BILINEAR)


def _to_rgb_l_or_rgba(im: Image.Image, icc: bytes | None) -> Image.Image:
    """8-bit RGB, L (grey without transparency) or RGBA (with transparency), for any mode JPEG,
    PNG and WebP decode to. `im` itself when it is already one of them."""
    mode = im.mode
    if mode.startswith("I;16"):
        # Pillow's convert("L") clips 16-bit values at 255; keep the high byte instead.
        high_byte = "L;16B" if mode.endswith("B") else "L;16"
        return Image.frombytes("L", im.size, im.tobytes(), "raw", high_byte)
    if mode in ("I", "F"):
        return im.point(lambda v: v * (1 / 257)).convert("L")
    if mode == "CMYK":
        return _cmyk_to_rgb(im, icc)
    has_alpha = mode in _ALPHA_MODES or (
        im.info.get("transparency") is not None and mode in ("1", "L", "P", "RGB")
    )
    if has_alpha:
        return im if mode == "RGBA" else im.convert("RGBA")
    if mode in ("L", "1"):
        return im if mode == "L" else im.convert("L")
    return im if mode == "RGB" else im.convert("RGB")


def _cmyk_to_rgb(im: Image.Image, icc: bytes | None) -> Image.Image:
    """Through the embedded CMYK profile when there is one; Pillow's plain formula otherwise."""
    if icc:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            converted = ImageCms.profileToProfile(im, source, _SRGB, outputMode="RGB")
        except (ImageCms.PyCMSError, OSError, ValueError):
            converted = None
        if converted is not None:
            return converted
    return im.convert("RGB")
