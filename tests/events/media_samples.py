"""Small real files of every media kind the privacy guard must catch, built in code.

Pillow writes the image formats it can; the others (and the audio, video and document formats) are
assembled from their published header layouts, with enough structure that a real reader would
accept them (frames of an MP3 stream, boxes of an MP4, elements of a WebM header, ...).
"""

from __future__ import annotations

import functools
import io
import random
import struct
import wave

from PIL import Image


def _pillow(fmt: str, size: tuple[int, int] = (40, 30), **options: object) -> bytes:
    rng = random.Random(fmt)
    image = Image.frombytes("RGB", size, rng.randbytes(size[0] * size[1] * 3))
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def _psd() -> bytes:
    header = b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, 30, 40, 8, 3)
    return header + struct.pack(">III", 0, 0, 0) + struct.pack(">H", 0) + bytes(3 * 30 * 40)


def _tiff_big_endian() -> bytes:
    """A 1x1 grey TIFF in Motorola byte order, IFD right after the header."""
    tags = [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1),
            (273, 4, 1, 8 + 2 + 12 * 9 + 4), (277, 3, 1, 1), (278, 3, 1, 1), (279, 4, 1, 1)]
    entries = b"".join(
        struct.pack(">HHI", tag, kind, count) + (struct.pack(">HH", value, 0) if kind == 3
                                                 else struct.pack(">I", value))
        for tag, kind, count, value in tags
    )
    return b"MM\x00*" + struct.pack(">I", 8) + struct.pack(">H", len(tags)) + entries + bytes(4) + b"\x80"


def _icns() -> bytes:
    """One 16x16 entry (`icp4`, PNG data), as macOS writes small icons."""
    png = _pillow("PNG", (16, 16))
    entry = b"icp4" + struct.pack(">I", 8 + len(png)) + png
    return b"icns" + struct.pack(">I", 8 + len(entry)) + entry


def _cur() -> bytes:
    bmp = _pillow("BMP", (16, 16))[14:]  # the DIB without its file header
    entry = struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 1, len(bmp), 22)
    return struct.pack("<HHH", 0, 2, 1) + entry + bmp


def _jxl_container() -> bytes:
    signature = b"\x00\x00\x00\x0cJXL \r\n\x87\n"
    ftyp = struct.pack(">I", 20) + b"ftypjxl \x00\x00\x00\x00jxl "
    codestream = b"\xff\x0a" + random.Random(5).randbytes(300)
    return signature + ftyp + struct.pack(">I", 8 + len(codestream)) + b"jxlc" + codestream


def _jxl_bare() -> bytes:
    return b"\xff\x0a\xfa\x1f\x01\x10\x09\x08\x06\x01" + random.Random(6).randbytes(400)


def _heic() -> bytes:
    ftyp = struct.pack(">I", 24) + b"ftypheic\x00\x00\x00\x00mif1heic"
    meta = struct.pack(">I", 12) + b"meta\x00\x00\x00\x00"
    return ftyp + meta + random.Random(7).randbytes(200)


def _mp4(brand: bytes = b"isom") -> bytes:
    ftyp = struct.pack(">I", 24) + b"ftyp" + brand + b"\x00\x00\x02\x00isomiso2"
    free = struct.pack(">I", 8) + b"free"
    mdat = struct.pack(">I", 208) + b"mdat" + random.Random(8).randbytes(200)
    return ftyp + free + mdat


def _webm() -> bytes:
    body = (
        b"\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08"
        b"\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02"
    )
    return b"\x1a\x45\xdf\xa3" + bytes([0x80 | len(body)]) + body + random.Random(9).randbytes(200)


def _wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as stream:
        stream.setnchannels(1)
        stream.setsampwidth(2)
        stream.setframerate(8000)
        stream.writeframes(random.Random(10).randbytes(1600))
    return out.getvalue()


def _mp3_frames(count: int = 6) -> bytes:
    """MPEG-1 Layer III, 128 kbit/s, 44.1 kHz: 417-byte frames."""
    header = b"\xff\xfb\x90\x64"
    rng = random.Random(11)
    return b"".join(header + rng.randbytes(417 - 4) for _ in range(count))


def _mp3_id3() -> bytes:
    tag = b"ID3\x04\x00\x00\x00\x00\x00\x17" + b"TIT2\x00\x00\x00\x0d\x00\x00\x03fuseforks!!!"
    return tag + _mp3_frames()


def _adts(count: int = 5) -> bytes:
    """AAC-LC ADTS frames of 120 bytes, 44.1 kHz stereo."""
    length = 120
    header = bytes([0xFF, 0xF1, 0x50, 0x80 | (length >> 11), (length >> 3) & 0xFF,
                    ((length & 7) << 5) | 0x1F, 0xFC])
    rng = random.Random(12)
    return b"".join(header + rng.randbytes(length - 7) for _ in range(count))


def _ogg() -> bytes:
    page = b"OggS\x00\x02" + bytes(8) + struct.pack("<II", 0x1234, 0) + b"\x00\x00\x00\x00"
    packet = b"\x01vorbis\x00\x00\x00\x00\x02\x44\xac\x00\x00" + bytes(15)
    return page + bytes([1, len(packet)]) + packet + random.Random(13).randbytes(200)


def _flac() -> bytes:
    info = struct.pack(">HH", 4096, 4096) + bytes(6) + b"\x0a\xc4\x42\xf0" + bytes(4) + bytes(16)
    return b"fLaC" + b"\x80\x00\x00\x22" + info + random.Random(14).randbytes(200)


def _aiff() -> bytes:
    comm = b"COMM" + struct.pack(">IhIh", 18, 1, 100, 16) + b"\x40\x0b\xfa" + bytes(7)
    ssnd = b"SSND" + struct.pack(">III", 208, 0, 0) + random.Random(15).randbytes(200)
    body = b"AIFF" + comm + ssnd
    return b"FORM" + struct.pack(">I", len(body)) + body


def _avi() -> bytes:
    body = b"AVI LIST" + struct.pack("<I", 4) + b"hdrl" + random.Random(16).randbytes(200)
    return b"RIFF" + struct.pack("<I", len(body)) + body


SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30">'
    b'<rect width="40" height="30" fill="#c81e1e"/></svg>'
)
SVG_WITH_PROLOG = b'<?xml version="1.0" encoding="UTF-8"?>\n' + SVG


@functools.cache
def media() -> dict[str, bytes]:
    """Name -> the bytes of one small file of that kind."""
    return {
        "JPEG": _pillow("JPEG"),
        "JPEG (EXIF)": _pillow("JPEG", exif=Image.Exif()),
        "PNG": _pillow("PNG"),
        "GIF": _pillow("GIF"),
        "WEBP": _pillow("WEBP"),
        "WEBP (lossless)": _pillow("WEBP", lossless=True),
        "BMP": _pillow("BMP"),
        "TIFF": _pillow("TIFF"),
        "TIFF (big-endian)": _tiff_big_endian(),
        "ICO": _pillow("ICO", (32, 32)),
        "CUR": _cur(),
        "PSD": _psd(),
        "JPEG2000 (jp2)": _pillow("JPEG2000", (32, 32)),
        "JPEG2000 (j2k)": _pillow("JPEG2000", (32, 32), no_jp2=True),
        "JXL (container)": _jxl_container(),
        "JXL (codestream)": _jxl_bare(),
        "QOI": _pillow("QOI"),
        "DDS": _pillow("DDS"),
        "ICNS": _icns(),
        "PDF": _pillow("PDF"),
        "SVG": SVG,
        "SVG (xml prolog)": SVG_WITH_PROLOG,
        "AVIF": _pillow("AVIF"),
        "HEIC": _heic(),
        "WAV": _wav(),
        "MP3 (ID3)": _mp3_id3(),
        "MP3 (frames)": _mp3_frames(),
        "AAC (ADTS)": _adts(),
        "OGG": _ogg(),
        "FLAC": _flac(),
        "AIFF": _aiff(),
        "MP4": _mp4(),
        "MOV": _mp4(b"qt  "),
        "WEBM": _webm(),
        "AVI": _avi(),
    }
