"""What image files start with, and how a JPEG's marker segments chain — read from bytes alone.

Two packages read this and may not import each other: the image pipeline (`fuseforks.images`:
which format is this, how large is it, is it whole) and the privacy guard
(`fuseforks.events.privacy`: is this base64 an image). So the knowledge sits here, below both,
written once: each signature, the format sniffer, and the walk over a JPEG's marker segments.
What each of them concludes from it (a header's size, a truncation, "media in the record") stays
with them.
"""

from __future__ import annotations

import struct
from typing import Literal, NamedTuple

JPEG = b"\xff\xd8\xff"
PNG = b"\x89PNG\r\n\x1a\n"
RIFF = b"RIFF"
"""A RIFF container: WebP images (`WEBP` at offset 8), and WAV audio and AVI video too."""
WEBP = b"WEBP"
FTYP = b"ftyp"
"""At offset 4: an ISO base media file; its brand at offset 8 says which (HEIF, AVIF, MP4...)."""
HEIF_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1"})
AVIF_BRANDS = frozenset({b"avif", b"avis"})

GIF = (b"GIF87a", b"GIF89a")
BMP = b"BM"
TIFF = (b"II*\x00", b"MM\x00*")
BIGTIFF = (b"II+\x00", b"MM\x00+")
ICO = b"\x00\x00\x01\x00"
CUR = b"\x00\x00\x02\x00"
PSD = b"8BPS"
JPEG2000_BOX = b"\x00\x00\x00\x0cjP  \r\n\x87\n"
JPEG2000_CODESTREAM = b"\xff\x4f\xff\x51"
JPEG_XL_CODESTREAM = b"\xff\x0a"
JPEG_XL_BOX = b"\x00\x00\x00\x0cJXL \r\n\x87\n"
QOI = b"qoif"
DDS = b"DDS "
ICNS = b"icns"
PDF = b"%PDF"
SVG = b"<svg"
XML = b"<?xml"

RECOGNIZED_IMAGE_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    *((magic, 0, "GIF") for magic in GIF),
    (BMP, 0, "BMP"),
    *((magic, 0, "TIFF") for magic in (*TIFF, *BIGTIFF)),
    (ICO, 0, "ICO"),
    (CUR, 0, "CUR"),
    (PSD, 0, "PSD"),
    (JPEG2000_BOX, 0, "JPEG2000"),
    (JPEG2000_CODESTREAM, 0, "JPEG2000"),
    (JPEG_XL_CODESTREAM, 0, "JXL"),
    (JPEG_XL_BOX, 0, "JXL"),
    (QOI, 0, "QOI"),
    (DDS, 0, "DDS"),
    (ICNS, 0, "ICNS"),
    (PDF, 0, "PDF"),
    (SVG, 0, "SVG"),
    (XML, 0, "SVG"),
)
"""(magic, offset, name) of the image formats recognised but not carried (JPEG, PNG and WebP are
carried; HEIF and AVIF are recognised by their `ftyp` brand). Read by the format sniffer and by the
privacy guard, which must catch every image format fuseforks knows."""


def sniff_format(head: bytes) -> str | None:
    """The format named by the first bytes, or None when no known magic number matches."""
    if head.startswith(JPEG):
        return "JPEG"
    if head.startswith(PNG):
        return "PNG"
    if head[:4] == RIFF and head[8:12] == WEBP:
        return "WEBP"
    for magic, offset, name in RECOGNIZED_IMAGE_SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return name
    if head[4:8] == FTYP:
        brand = head[8:12]
        if brand in AVIF_BRANDS:
            return "AVIF"
        if brand in HEIF_BRANDS:
            return "HEIF"
    return None


# --- a JPEG's marker segments ----------------------------------------------------------------------

SOS = 0xDA
"""Start of scan: the entropy-coded data follows its header."""
EOI = 0xD9
STANDALONE_MARKERS = frozenset({0xD8, *range(0xD0, 0xD8), 0x01})
"""Markers without a length: SOI, the restart markers, TEM."""
SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start of frame (the image's size): C0..CF except DHT (C4), JPG (C8) and DAC (CC)."""


class JpegSegment(NamedTuple):
    marker: int
    at: int
    """Where its length field starts (right after the marker)."""
    length: int
    """As the segment declares it, its two length bytes included; 0 for a standalone marker."""

    @property
    def end(self) -> int:
        return self.at + self.length


JpegStop = Literal["scan", "eoi", "end", "cut", "not_a_marker", "bad_length", "limit"]


class JpegWalk(NamedTuple):
    segments: list[JpegSegment]
    stop: JpegStop
    """`scan`: the last segment is the first SOS; `eoi`: an end of image came first; `end`: the
    data ends where a marker should start; `cut`: it ends inside a length field; `not_a_marker`:
    a byte other than 0xFF where a marker should start (strict walks only); `bad_length`: the last
    segment declares less than its own length field; `limit`: `limit` segments were read."""
    at: int
    """Where the walk stopped."""


def walk_jpeg(data: bytes, *, fill: bool = True, limit: int | None = None) -> JpegWalk:
    """The marker segments of a JPEG after its SOI, as their headers declare them, up to the first
    scan. Nothing is trusted: a declared length is reported, never read past (a caller compares a
    segment's `end` with what it has). `fill`: 0xFF fill bytes before a marker are skipped, as
    decoders do; without it, a marker must start exactly where the segment before ends. `limit`:
    stop after that many segments with a length."""
    segments: list[JpegSegment] = []
    position, end, counted = 2, len(data), 0
    while True:
        if limit is not None and counted >= limit:
            return JpegWalk(segments, "limit", position)
        if fill:
            while position < end and data[position] == 0xFF:
                position += 1
        elif position < end:
            if data[position] != 0xFF:
                return JpegWalk(segments, "not_a_marker", position)
            position += 1
        if position >= end:
            return JpegWalk(segments, "end", position)
        marker = data[position]
        position += 1
        if marker in STANDALONE_MARKERS or marker == EOI:
            segments.append(JpegSegment(marker, position, 0))
            if marker == EOI:
                return JpegWalk(segments, "eoi", position)
            continue
        if position + 2 > end:
            return JpegWalk(segments, "cut", position)
        (length,) = struct.unpack_from(">H", data, position)
        segments.append(JpegSegment(marker, position, length))
        counted += 1
        if length < 2:
            return JpegWalk(segments, "bad_length", position)
        if marker == SOS:
            return JpegWalk(segments, "scan", position)
        position += length
