"""Read what an image declares from its header, without decoding a pixel.

The normalizer decides pass-through and the decompression-bomb guard from this alone, so it must be
cheap (a walk over segment/chunk headers) and it must never trust a length it has not bounded.
It also answers "is this file whole?" for the two formats that may pass through byte for byte,
because a truncated JPEG or WebP sent as is would reach the model as a broken picture.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from fuseforks.core.signatures import (
    EOI,
    PNG,
    SOF_MARKERS,
    SOS,
    STANDALONE_MARKERS,
    JpegSegment,
    walk_jpeg,
)


class ProbeError(ValueError):
    """The header is not what its magic number promised (short, inconsistent or malformed)."""


@dataclass(frozen=True, slots=True)
class Header:
    """What the bytes declare: format, dimensions, and the two facts pass-through depends on."""

    format: str  # "JPEG" | "PNG" | "WEBP"
    width: int
    height: int
    animated: bool = False
    intact: bool = True  # the file ends where its own structure says it ends
    transparent: bool = False  # PNG: an alpha channel or a tRNS chunk
    profiled: bool = False  # PNG: an embedded colour profile (iCCP) other pipelines may ignore
    deep: bool = False  # PNG: 16 bits per sample


def probe(data: bytes, fmt: str) -> Header:
    """Dimensions and integrity of a JPEG, PNG or WebP, read from headers only."""
    if fmt == "JPEG":
        return _probe_jpeg(data)
    if fmt == "PNG":
        return _probe_png(data)
    if fmt == "WEBP":
        return _probe_webp(data)
    raise ProbeError(f"no header reader for {fmt}")


def _probe_jpeg(data: bytes) -> Header:
    """Walk marker segments from SOI to the first SOS; the frame header gives the size.

    Intact means an EOI marker follows the first scan. Entropy-coded data stuffs every 0xFF with
    0x00, so FF D9 cannot occur inside a scan: a file cut anywhere in its scans has no EOI after
    the first SOS. Found from the end, this costs nothing for a whole file.
    """
    walk = walk_jpeg(data)
    size: tuple[int, int] | None = None
    for segment in _with_length(walk.segments):
        if segment.length < 2 or segment.end > len(data):
            raise ProbeError("JPEG segment runs past the end")
        if segment.marker in SOF_MARKERS and size is None:
            if segment.length < 7:
                raise ProbeError("JPEG frame header is too short")
            height, width = struct.unpack_from(">HH", data, segment.at + 3)
            size = (width, height)
        if segment.marker == SOS:
            if size is None:
                raise ProbeError("JPEG scan before any frame header")
            intact = data.rfind(b"\xff\xd9", segment.end) >= 0
            return Header("JPEG", size[0], size[1], intact=intact)
    if walk.stop == "cut":
        raise ProbeError("JPEG segment header is cut")
    raise ProbeError("JPEG ends before its first scan")


def _with_length(segments: list[JpegSegment]) -> list[JpegSegment]:
    """The segments that have a length (not SOI, RSTn, TEM or EOI)."""
    return [s for s in segments if s.marker not in STANDALONE_MARKERS and s.marker != EOI]


_JPEG_SEGMENT_NAMES = {0xC4: "DHT", 0xDA: "SOS", 0xDB: "DQT", 0xDD: "DRI", 0xFE: "COM"}


def _jpeg_segment_name(marker: int) -> str:
    if 0xE0 <= marker <= 0xEF:
        return f"APP{marker - 0xE0}"
    if marker in SOF_MARKERS:
        return f"SOF{marker - 0xC0}"
    return _JPEG_SEGMENT_NAMES.get(marker, f"0x{marker:02X}")


def truncation(data: bytes, fmt: str) -> str | None:
    """How a JPEG, PNG or WebP is cut short, read from its own structure; None when it is not.

    "truncated: N of M bytes" when the file declares its length (WebP's RIFF header); "N of at
    least M bytes" when a segment or chunk declares more than is left (the file is at least that
    long); for a JPEG whose scan is cut, "N bytes, no end of image after its scan".
    """
    size = len(data)
    if fmt == "WEBP":
        if size < 8:
            return f"truncated: {size:,} bytes, shorter than its RIFF header"
        declared = struct.unpack_from("<I", data, 4)[0] + 8
        return f"truncated: {size:,} of {declared:,} bytes" if declared > size else None
    if fmt == "PNG":
        pos = len(PNG)
        if size < pos + 25:
            return f"truncated: {size:,} of at least {pos + 25 + 12:,} bytes (cut in its header)"
        while pos + 8 <= size:
            length, ctype = struct.unpack_from(">I4s", data, pos)
            chunk_end = pos + 12 + length
            if chunk_end > size:
                name = ctype.decode("ascii") if ctype.isalpha() else "unnamed"
                return f"truncated: {size:,} of at least {chunk_end:,} bytes (cut in its {name} chunk)"
            if ctype == b"IEND":
                return None
            pos = chunk_end
        return None
    if fmt == "JPEG":
        walk = walk_jpeg(data)
        for segment in _with_length(walk.segments):
            if segment.end > size:
                return (f"truncated: {size:,} of at least {segment.end:,} bytes"
                        f" (cut in its {_jpeg_segment_name(segment.marker)} segment)")
            if segment.marker == SOS:
                if data.rfind(b"\xff\xd9", segment.end) < 0:
                    return f"truncated: {size:,} bytes, no end of image after its scan"
                return None
        if walk.stop == "end":
            return f"truncated: {size:,} bytes, cut before its first scan"
        if walk.stop == "cut":
            return f"truncated: {size:,} bytes, cut in a segment header"
    return None


def damaged_ancillary_png_chunks(data: bytes) -> list[tuple[int, int]]:
    """(start, end) byte spans of whole ancillary chunks whose CRC is wrong, up to IEND.

    Only ancillary chunks (lower-case first letter: iCCP, tEXt, eXIf...) are checksummed; critical
    ones are left to the decoder, which refuses them. A chunk cut by the end of the file stops
    the walk: the decoder will report the truncation.
    """
    damaged: list[tuple[int, int]] = []
    pos = len(PNG)
    end = len(data)
    while pos + 12 <= end:
        length, ctype = struct.unpack_from(">I4s", data, pos)
        chunk_end = pos + 12 + length
        if chunk_end > end:
            break
        if ctype[0] & 0x20:
            (crc,) = struct.unpack_from(">I", data, chunk_end - 4)
            if zlib.crc32(data[pos + 4 : chunk_end - 4]) != crc:
                damaged.append((pos, chunk_end))
        if ctype == b"IEND":
            break
        pos = chunk_end
    return damaged


def _probe_png(data: bytes) -> Header:
    """IHDR gives the size (it must be the first chunk); acTL marks an animated PNG, an alpha
    colour type or tRNS a transparent one, iCCP a colour profile. Intact means every chunk fits
    the file with a right CRC, and IEND is reached: a PNG may pass through byte for byte."""
    if len(data) < 33:
        raise ProbeError("PNG is shorter than its header")
    length, ctype = struct.unpack_from(">I4s", data, 8)
    if ctype != b"IHDR" or length != 13:
        raise ProbeError("PNG does not start with IHDR")
    width, height, depth, colour_type = struct.unpack_from(">IIBB", data, 16)
    seen: set[bytes] = set()
    intact = False
    pos, end = len(PNG), len(data)
    while pos + 12 <= end:
        length, ctype = struct.unpack_from(">I4s", data, pos)
        if pos + 12 + length > end:
            break
        (crc,) = struct.unpack_from(">I", data, pos + 8 + length)
        if zlib.crc32(data[pos + 4 : pos + 8 + length]) != crc:
            break
        if ctype == b"IEND":
            intact = True
            break
        if ctype in (b"acTL", b"tRNS", b"iCCP"):
            seen.add(ctype)
        pos += 12 + length
    return Header("PNG", width, height, animated=b"acTL" in seen, intact=intact,
                  transparent=colour_type in (4, 6) or b"tRNS" in seen,
                  profiled=b"iCCP" in seen, deep=depth > 8)


def ico_entry_sizes(data: bytes) -> list[tuple[int, int]]:
    """The size of every image of an ICO as the image itself declares it — a PNG entry by its
    IHDR, a bitmap entry by its header — since a directory may declare 64 x 64 for a PNG that
    declares 16,000 x 16,000. An entry that points past the file or is neither is skipped (the
    decoder refuses it)."""
    if len(data) < 6:
        raise ProbeError("ICO is shorter than its header")
    (count,) = struct.unpack_from("<H", data, 4)
    sizes: list[tuple[int, int]] = []
    for index in range(count):
        at = 6 + 16 * index
        if at + 16 > len(data):
            raise ProbeError("ICO directory runs past the end")
        offset = struct.unpack_from("<I", data, at + 12)[0]
        head = data[offset : offset + 24]
        if head.startswith(PNG) and len(head) >= 24:
            sizes.append(struct.unpack_from(">II", head, 16))
        elif len(head) >= 12 and struct.unpack_from("<I", head, 0)[0] >= 12:
            width, height = struct.unpack_from("<ii", head, 4)
            sizes.append((abs(width), abs(height) // 2))  # the height counts the AND mask too
    return sizes


def _probe_webp(data: bytes) -> Header:
    """Size from the VP8 / VP8L bitstream header or the VP8X canvas; VP8X flags animation.

    Intact means the RIFF length matches the file and every chunk fits inside it.
    """
    end = len(data)
    if end < 20:
        raise ProbeError("WebP is shorter than its first chunk header")
    (riff_size,) = struct.unpack_from("<I", data, 4)
    intact = riff_size + 8 <= end
    limit = min(end, riff_size + 8)
    pos = 12
    canvas: tuple[int, int] | None = None
    animated = False
    bitstream: tuple[int, int] | None = None
    while pos + 8 <= limit:
        ctype, length = struct.unpack_from("<4sI", data, pos)
        body = pos + 8
        if body + length > limit:
            intact = False
            if ctype not in (b"VP8 ", b"VP8L", b"VP8X") or body + 10 > end:
                break
        if ctype == b"VP8X":
            if body + 10 > end:
                raise ProbeError("WebP VP8X chunk is cut")
            flags = data[body]
            animated = bool(flags & 0x02)
            w = int.from_bytes(data[body + 4 : body + 7], "little") + 1
            h = int.from_bytes(data[body + 7 : body + 10], "little") + 1
            canvas = (w, h)
        elif ctype == b"VP8 " and bitstream is None:
            if body + 10 > end or data[body + 3 : body + 6] != b"\x9d\x01\x2a":
                raise ProbeError("WebP VP8 frame header is malformed")
            w, h = struct.unpack_from("<HH", data, body + 6)
            bitstream = (w & 0x3FFF, h & 0x3FFF)
        elif ctype == b"VP8L" and bitstream is None:
            if body + 5 > end or data[body] != 0x2F:
                raise ProbeError("WebP VP8L header is malformed")
            bits = int.from_bytes(data[body + 1 : body + 5], "little")
            bitstream = ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        pos = body + length + (length & 1)
        if not intact:
            break
    if canvas is not None:
        if animated:
            return Header("WEBP", canvas[0], canvas[1], animated=True, intact=intact)
        if bitstream is None:
            raise ProbeError("still WebP without an image bitstream")
        if bitstream != canvas:
            raise ProbeError("WebP canvas and bitstream sizes disagree")
        return Header("WEBP", canvas[0], canvas[1], intact=intact)
    if bitstream is None:
        raise ProbeError("WebP without an image bitstream")
    return Header("WEBP", bitstream[0], bitstream[1], intact=intact)
