"""The last guard before an event is sealed: no pixels in the record — and no change to real text.

The types already forbid bytes; this catches media smuggled into *text*: an image (or audio, video,
a PDF) that a server, a model or a user put in a string as base64, bare or inside a `data:` URL.
What counts as media is decided by what the text *decodes to*, never by how long a word is:

1. **A known signature.** At any position of a text — after a space or a quote, inside a `data:`
   URL, or glued to the end of a word — base64 (standard `+/` or URL-safe `-_` alphabet, with or
   without `=` padding, on one line or wrapped over lines, indented or not) is media when its
   decoded bytes start with the signature of a known format *and* the header after the signature
   is consistent: JPEG marker segments that chain, a BMP's reserved zeros and header size, three
   MP3 frames each where the one before ends, a RIFF or ICNS length that fits the data, a GIF
   screen descriptor no text could spell, ... The formats: every image format fuseforks
   recognises (the signatures of `fuseforks.core.signatures`, which the image pipeline reads too,
   and the same JPEG marker walk), audio (WAV and any RIFF, MP3 with ID3 or bare frames, AAC ADTS, OGG, FLAC, AIFF), video
   (MP4/MOV/3GP and every ISO `ftyp` file, WebM/Matroska, AVI) and PDF. Candidates are found in
   one regular-expression pass over the base64 spelling of each signature; only candidates are
   decoded, 48 bytes first and up to 6 KB when a check needs more.
   Three kinds need more care, because text can spell them: SVG and PDF are text formats, so
   they count only where a base64 text begins (not inside a run or a block of base64 lines) and
   only with the SVG namespace or a PDF object in their first 6 KB; a bare JPEG XL codestream
   has a two-byte signature, so it counts only in the standard alphabet, at the start of a run of
   256+ characters that reads like encoded binary. And a piece shorter than 32 characters (24
   bytes, less than any whole image file) is a mention, as in documentation, not an image.
2. **A size no text reaches.** A single unbroken run of base64-alphabet characters (`A-Z a-z 0-9
   + / - _`) of `BLOB_RUN_CHARS` = 65,536 (64 KiB) or more is a blob whatever it decodes to.
   Measured on 168 MB of text on the development machine (16,672 source, documentation, JSON,
   HTML, SVG and PEM files of the Python environment and /usr/share): the longest run that was
   not a binary blob was 2,070 characters (base64 of a git commit text in a JSON SBOM), then
   1,024 (a hexadecimal prime in the Node.js docs); every longer run was an encoded binary (a
   4,430-character PNG inside an SVG icon, a 1,350,970-character WebAssembly module in a .js
   file). 64 KiB is 30 times the longest real text run found, above any identifier, digest, key,
   token or JWT part (those the tests generate reach 60,000 characters and pass), and a run that
   long would be some 40,000 tokens of nothing a model can read. Wrapped base64 of an unknown
   binary (lines of 76 characters) is not caught by this rule: each line is a short run, and a
   list of 64-character hex digests one per line looks exactly the same.

Everything else is left byte for byte as it was: a 256-digit hex checksum, a JWT, a path, a long
identifier, the base64 of a text (even one that names "GIF89a", "RIFF" or `<svg`). Measured: 180
MB of random base64, URL-safe base64, hex, identifiers, base64 of text sprinkled with format names
and JWT-like tokens, in pieces of 8 to 60,000 characters, gave no detection at all; the real
text above gave 13: 12 embedded images (11 PNG, a GIF in a YAML `!!binary` block) and the
WebAssembly blob. `data:` URLs without `;base64`
(percent-encoded, in practice SVG markup the model can read) are text and stay. Gemini thought
signatures are opaque base64 of a provider's own bytes; they are recorded in 76-character pieces
(`ToolCallRecord.signature`) and checked like any other string.

`elide_base64` replaces each detected span with `[base64 omitted: N characters]` (N counts the
characters removed, line breaks and padding included; the `data:...;base64,` prefix of a URL
stays, so the model still reads what kind of thing was there). The engine applies it to every
text it records *before* the text goes into an event, and the model's messages are built from
those events, so the model reads exactly what the record holds (and `fuseforks mcp call` prints
the same). `find_pixel_leak` applies the same detection to every string of an encoded event: an
elided text never trips it.
"""

from __future__ import annotations

import binascii
import functools
import re
import struct

import msgspec

from fuseforks.core import signatures as sig
from fuseforks.core.errors import PixelLeakError
from fuseforks.events.codec import encode_event
from fuseforks.events.types import TurnEvent

BLOB_RUN_CHARS = 64 * 1024
"""An unbroken base64-alphabet run this long is a blob whatever it decodes to (see above)."""

_ALPHABET = "A-Za-z0-9+/_\\-"
_STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_URL_SAFE = _STD[:62] + "-_"
_TO_STD = str.maketrans("-_", "+/")
_RUN_AT = re.compile(f"[{_ALPHABET}]+")
_PADDING_AT = re.compile("={1,2}")
# A line break inside wrapped base64: a real one, or the two-character escape of a JSON text
# (tool arguments are recorded as JSON text, where a newline is written `\n`).
_BREAK_AT = re.compile(r"\r?\n|\\r\\n|\\n")
_LINE_END_AT = re.compile(r"\r?\n|\\r\\n|\\n|[\"'`)\]}>,;]|$")
_MAX_WRAP = 1024  # characters: wrapped base64 uses lines of 64 or 76; an unwrapped run ends at its line
_INDENT_AT = re.compile("[ \t]*")
_TEXT_GOES_ON_AT = re.compile("[ \t.,;:!?]")
_WORD = re.compile("[A-Z]?[a-z]+|[0-9]{1,6}")
_BLOB_RUN = re.compile(f"(?<![{_ALPHABET}])[{_ALPHABET}]{{{BLOB_RUN_CHARS},}}")

_MIN_MEDIA_CHARS = 32  # 24 bytes: less than any whole image file; a shorter piece is a mention
_FIRST_LOOK_CHARS = 64  # 48 decoded bytes: every fixed header check below fits in them
_LONG_LOOK_CHARS = 8192  # 6 KB: three MP3 frames, JPEG segments, an SVG root after its prolog
_WEAK_MIN_CHARS = 256  # a bare JPEG XL codestream (a 2-byte signature) needs this much run

MARKER = "[base64 omitted: {n} characters]"




# --- signatures ---------------------------------------------------------------------------------


def _masked(value: bytes, mask: bytes | None = None) -> tuple[bytes, bytes]:
    return value, mask if mask is not None else b"\xff" * len(value)


# (value, mask) of the leading bytes of each kind of file: the base64 spelling of these bits is
# what the candidate search looks for. Each candidate is then checked by `_identify`.
_LEADING_BITS: list[tuple[bytes, bytes]] = [
    _masked(sig.JPEG),
    _masked(sig.PNG),
    _masked(sig.RIFF),  # WebP, WAV, AVI
    _masked(b"FORM"),  # AIFF
    _masked(b"\x00\x00\x00\x00" + sig.FTYP, b"\xff\xff\x00\x00\xff\xff\xff\xff"),  # HEIF, AVIF, MP4
    _masked(b"OggS"),
    _masked(b"fLaC"),
    _masked(b"ID3"),
    _masked(b"\xff\xe0", b"\xff\xe0"),  # MPEG audio frame sync, AAC ADTS
    _masked(b"\x1a\x45\xdf\xa3"),  # Matroska, WebM
    _masked(b"%PDF-"),
    *(_masked(magic) for magic, offset, _ in sig.RECOGNIZED_IMAGE_SIGNATURES if offset == 0),
]


def _char_class(allowed: list[int], alphabet: str) -> str:
    if len(allowed) == 64:
        return f"[{_ALPHABET}]"
    if len(allowed) == 1:
        return re.escape(alphabet[allowed[0]])
    return "[" + "".join(re.escape(alphabet[v]) for v in allowed) + "]"


def _spelling(value: bytes, mask: bytes, alphabet: str) -> str:
    """A regular expression for the base64 characters that encode these leading bits."""
    bits = len(value) * 8
    classes = []
    for index in range(bits // 6 + (bits % 6 != 0)):
        want = known = 0
        for bit in range(6):
            position = index * 6 + bit
            byte, shift = divmod(position, 8)
            if byte < len(value) and mask[byte] >> (7 - shift) & 1:
                known |= 1 << (5 - bit)
                want |= (value[byte] >> (7 - shift) & 1) << (5 - bit)
        classes.append(_char_class([v for v in range(64) if v & known == want], alphabet))
    while classes and classes[-1] == f"[{_ALPHABET}]":
        classes.pop()
    return "".join(classes)


def _candidate_pattern() -> re.Pattern[str]:
    """One search for every spelling: a class of first characters (cheap to reject a position),
    then the spellings grouped by first character. Zero-width, so the caller moves on one
    character after a false candidate and a real signature starting inside it is still found."""
    spellings = {
        _spelling(v, m, alphabet) for v, m in _LEADING_BITS for alphabet in (_STD, _URL_SAFE)
    }
    groups: dict[str, list[str]] = {}
    for spelling in spellings:
        first = re.match(r"\[[^]]*\]|\\.|.", spelling)
        assert first is not None
        groups.setdefault(first.group(), []).append(spelling[first.end() :])
    firsts = "".join(key[1:-1] if key.startswith("[") else key for key in groups)
    trie = "|".join(
        f"{key}(?:{'|'.join(sorted(rests))})" for key, rests in sorted(groups.items())
    )
    return re.compile(f"(?=[{firsts}])(?={trie})")


_CANDIDATE = _candidate_pattern()

_JPEG_FIRST_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xDB, 0xDD, 0xFE, *range(0xE0, 0xF0)})
_JPEG_MARKERS = frozenset({*range(0xC0, 0xD0), *range(0xDA, 0xE0), *range(0xE0, 0xF0), 0xFE})
# Identifiers of the APPn segment a JPEG starts with, for a first segment too long to walk past.
_JPEG_APP_IDS = (b"JFIF\x00", b"JFXX\x00", b"Exif\x00\x00", b"http://ns.adobe.com/",
                 b"ICC_PROFILE\x00", b"Adobe", b"MPF\x00", b"Ducky", b"Photoshop 3.0\x00")
_BMP_HEADER_SIZES = frozenset({12, 16, 40, 52, 56, 64, 108, 124})
_MPEG_BITRATES = {  # kbit/s by (version, layer) family; bitrate index 1..14
    (3, 3): (32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (3, 2): (32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (3, 1): (32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (2, 3): (32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (2, 2): (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_MPEG_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
_PDF_OBJECT = re.compile(rb"\d+ \d+ obj\b")  # a PDF's first indirect object, within 6 KB
_SVG_NAMESPACE = b"http://www.w3.org/2000/svg"  # every standalone SVG file declares it
_AUDIO_FRAMES = 3  # a bare MPEG or ADTS stream: this many consecutive, consistent frame headers


def _printable(data: bytes) -> bool:
    return all(0x20 <= b < 0x7F for b in data)


def _textual(data: bytes) -> bool:
    """Bytes a text could hold: UTF-8 (possibly cut at the end), no control character but tab,
    line feed and carriage return. Text that names a format ("GIF89a is...") is not that format."""
    for cut in range(4):
        try:
            decoded = data[: len(data) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return all(c >= " " or c in "\t\n\r" for c in decoded)
    return False


def _mpeg_frame(data: bytes, at: int) -> tuple[int, int] | None:
    """(length, identity) of an MPEG audio frame header at `at`, or None."""
    if at + 4 > len(data) or data[at] != 0xFF or data[at + 1] & 0xE0 != 0xE0:
        return None
    version, layer = data[at + 1] >> 3 & 3, data[at + 1] >> 1 & 3
    rate_index, bitrate_index = data[at + 2] >> 2 & 3, data[at + 2] >> 4
    if version == 1 or layer == 0 or rate_index == 3 or bitrate_index in (0, 15):
        return None
    family = (3, layer) if version == 3 else (2, 3 if layer == 3 else 2)
    bitrate = _MPEG_BITRATES[family][bitrate_index - 1] * 1000
    rate = _MPEG_RATES[version][rate_index]
    padding = data[at + 2] >> 1 & 1
    if layer == 3:  # Layer I
        length = (12 * bitrate // rate + padding) * 4
    elif layer == 1 and version != 3:  # Layer III of MPEG-2 and 2.5
        length = 72 * bitrate // rate + padding
    else:
        length = 144 * bitrate // rate + padding
    return length, (data[at + 1] & 0xFE) << 2 | rate_index


def _adts_frame(data: bytes, at: int) -> tuple[int, int] | None:
    if at + 7 > len(data) or data[at] != 0xFF or data[at + 1] & 0xF6 != 0xF0:
        return None
    length = (data[at + 3] & 3) << 11 | data[at + 4] << 3 | data[at + 5] >> 5
    return (length, data[at + 1] << 8 | data[at + 2]) if length >= 7 else None


def _audio_frames(data: bytes) -> bool:
    """A bare MPEG audio (MP3) or AAC ADTS stream: consecutive frame headers, each where the one
    before says it ends, all of one stream (same version, layer and sample rate)."""
    for frame in (_mpeg_frame, _adts_frame):
        position, identity = 0, None
        for _ in range(_AUDIO_FRAMES):
            header = frame(data, position)
            if header is None or identity not in (None, header[1]):
                break
            position, identity = position + header[0], header[1]
        else:
            return True
    return False


class _Look:
    """A candidate position, decoded lazily: 48 bytes first, up to 6 KB if a check needs them."""

    def __init__(self, text: str, start: int) -> None:
        self.text, self.start = text, start
        self.head = _decode(_chars(text, start, _FIRST_LOOK_CHARS))
        self._more: bytes | None = None

    def more(self) -> bytes:
        if self._more is None:
            self._more = _decode(_chars(self.text, self.start, _LONG_LOOK_CHARS))
        return self._more

    def decoded_size(self) -> int:
        """An upper bound of the decoded size of the whole base64 from here."""
        return (_span_end(self.text, self.start) - self.start) * 3 // 4

    def at_run_start(self) -> bool:
        return self.start == 0 or _RUN_AT.match(self.text, self.start - 1) is None

    def at_stream_start(self) -> bool:
        """Where a base64 text begins: not inside a run, and not at the start of a line that
        continues a block of base64 lines (the text signatures, `<svg` and `%PDF-`, could be the
        middle of an encoded document there)."""
        if not self.at_run_start():
            return False
        line_start = self.text.rfind("\n", 0, self.start) + 1
        if line_start != self.start or line_start == 0:
            return True
        previous = self.text[self.text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
        return _RUN_AT.fullmatch(previous.rstrip("\r=")) is None


def _jpeg(look: _Look) -> bool:
    """SOI, then marker segments that chain (two walked), or one whose APPn identifier says so."""
    h = look.head
    if len(h) < 6 or h[3] not in _JPEG_FIRST_MARKERS:
        return False
    data, walked = h, 0
    while True:
        walk = sig.walk_jpeg(data, fill=False, limit=2)
        # A segment counts once its marker and length are both in what was decoded.
        seen = [s for s in walk.segments if s.at + 2 <= len(data)]
        if any(s.marker not in _JPEG_MARKERS or s.length < 2 for s in seen):
            return False
        walked = len(seen)
        whole = len(seen) == len(walk.segments)
        if walk.stop in ("scan", "limit") and whole:
            break
        if walk.stop == "not_a_marker" and walk.at + 4 <= len(data):
            return False
        if data is h and len(more := look.more()) > len(h):
            data = more  # the walk needs more than the first look decoded
            continue
        break
    return walked >= 2 or h[6:].startswith(_JPEG_APP_IDS)


def _bare_jpeg_xl(look: _Look) -> bool:
    """`FF 0A` is two bytes of signature and nothing checkable after them, so only in the standard
    alphabet, at the start of a run of 256 or more characters that reads like encoded binary (a
    path such as `/work/...` starts the same way, with many slashes and few capitals)."""
    if not look.at_run_start():
        return False
    window = _chars(look.text, look.start, _WEAK_MIN_CHARS)
    return (
        len(window) == _WEAK_MIN_CHARS
        and "-" not in window
        and "_" not in window
        and window.count("/") <= 16
        and sum(c.isupper() for c in window) >= 32
    )


def _identify(look: _Look) -> str | None:
    """The kind of media a candidate is, when the header after its signature is consistent."""
    h = look.head
    if h[:3] == sig.JPEG:
        return "JPEG image" if _jpeg(look) else None
    if h[:8] == sig.PNG:
        return "PNG image"
    if h[:6] in sig.GIF and len(h) >= 13:
        return "GIF image" if not _textual(h[6:13]) else None
    if h[:4] == sig.RIFF and len(h) >= 12 and _printable(h[8:12]):
        (size,) = struct.unpack_from("<I", h, 4)
        if not 4 <= size <= look.decoded_size():
            return None
        return {sig.WEBP: "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}.get(
            h[8:12], "RIFF media"
        )
    if h[:4] == b"FORM" and h[8:12] in (b"AIFF", b"AIFC"):
        (size,) = struct.unpack_from(">I", h, 4)
        return "AIFF audio" if 4 <= size <= look.decoded_size() else None
    if h[:2] == b"\x00\x00" and h[4:8] == sig.FTYP and len(h) >= 12 and _printable(h[8:12]):
        (size,) = struct.unpack_from(">I", h, 0)
        ok = size >= 16 and size % 4 == 0
        return f"ISO media ({h[8:12].decode().strip()})" if ok else None
    if h[:4] == b"OggS" and len(h) >= 6 and h[4] == 0 and h[5] <= 7:
        return "OGG media"
    if h[:4] == b"fLaC" and len(h) >= 8 and h[4] & 0x7F == 0 and h[5:8] == b"\x00\x00\x22":
        return "FLAC audio"
    if h[:3] == b"ID3" and len(h) >= 10 and h[3] in (2, 3, 4) and h[4] != 0xFF:
        ok = h[5] & 0x0F == 0 and all(b < 0x80 for b in h[6:10])
        return "MP3 audio" if ok else None
    if h[:4] == b"\x1a\x45\xdf\xa3":
        return "Matroska/WebM media" if b"webm" in h or b"matroska" in h else None
    if h[:5] == sig.PDF + b"-" and len(h) >= 8 and h[5:6].isdigit() and h[6:7] == b".":
        ok = look.at_stream_start() and _PDF_OBJECT.search(look.more()) is not None
        return "PDF document" if ok else None
    if h[:2] == sig.BMP and len(h) >= 18:
        size, reserved, offset, header = struct.unpack_from("<IIII", h, 2)
        ok = reserved == 0 and header in _BMP_HEADER_SIZES and size >= 26
        return "BMP image" if ok and offset >= 14 + header else None
    if h[:4] in sig.TIFF and len(h) >= 8:
        (offset,) = struct.unpack_from("<I" if h[0] == 0x49 else ">I", h, 4)
        ok = offset >= 8 and offset % 2 == 0 and offset < look.decoded_size()
        return "TIFF image" if ok else None
    if h[:4] in sig.BIGTIFF and len(h) >= 8:
        byte_size, zero = struct.unpack_from("<HH" if h[0] == 0x49 else ">HH", h, 4)
        return "TIFF image" if (byte_size, zero) == (8, 0) else None
    if h[:4] in (sig.ICO, sig.CUR) and len(h) >= 22:
        (count,) = struct.unpack_from("<H", h, 4)
        (offset,) = struct.unpack_from("<I", h, 18)
        ok = 1 <= count <= 255 and h[9] == 0 and 6 + 16 * count <= offset < look.decoded_size()
        return ("ICO image" if h[:4] == sig.ICO else "CUR image") if ok else None
    if h[:4] == sig.PSD and len(h) >= 12 and h[4:6] in (b"\x00\x01", b"\x00\x02"):
        return "PSD image" if h[6:12] == b"\x00" * 6 else None
    if h[:12] in (sig.JPEG2000_BOX, sig.JPEG_XL_BOX):
        return "JPEG 2000 image" if h[:12] == sig.JPEG2000_BOX else "JPEG XL image"
    if h[:4] == sig.JPEG2000_CODESTREAM and len(h) >= 42:
        (lsiz,) = struct.unpack_from(">H", h, 4)
        (csiz,) = struct.unpack_from(">H", h, 40)
        return "JPEG 2000 image" if 1 <= csiz <= 16384 and lsiz == 38 + 3 * csiz else None
    if h[:2] == sig.JPEG_XL_CODESTREAM:
        return "JPEG XL image" if _bare_jpeg_xl(look) else None
    if h[:4] == sig.QOI and len(h) >= 14:
        width, height = struct.unpack_from(">II", h, 4)
        ok = 0 < width * height <= 400_000_000 and h[12] in (3, 4) and h[13] in (0, 1)
        return "QOI image" if ok else None
    if h[:4] == sig.DDS and len(h) >= 8:
        return "DDS image" if struct.unpack_from("<I", h, 4)[0] == 124 else None
    if h[:4] == sig.ICNS and len(h) >= 12:
        (length,) = struct.unpack_from(">I", h, 4)
        ok = length >= 8 and _printable(h[8:12]) and length <= look.decoded_size() + 2
        return "ICNS image" if ok else None
    if h[:4] == sig.SVG or (h[:5] == sig.XML and sig.SVG in look.more()):
        ok = look.at_stream_start() and _SVG_NAMESPACE in look.more()
        return "SVG image" if ok else None
    if h[:1] == b"\xff" and _audio_frames(look.more()):
        return "MP3/AAC audio"
    return None


# --- finding media in a text ------------------------------------------------------------------


@functools.cache
def _bounded_run(limit: int) -> re.Pattern[str]:
    return re.compile(f"[{_ALPHABET}]{{1,{limit}}}")


def _chars(text: str, start: int, limit: int) -> str:
    """Up to `limit` base64 characters from `start`, read across line breaks and indentation."""
    pieces: list[str] = []
    count = 0
    position = start
    bounded = _bounded_run(limit)
    while count < limit:
        run = bounded.match(text, position)
        if run is None:
            break
        piece = run.group()[: limit - count]
        pieces.append(piece)
        count += len(piece)
        position = run.end()
        brk = _BREAK_AT.match(text, position)
        if brk is None:
            break
        margin = _INDENT_AT.match(text, brk.end())
        assert margin is not None  # it matches the empty string
        position = margin.end()
    return "".join(pieces)


def _decode(chars: str) -> bytes:
    usable = chars[: len(chars) // 4 * 4].translate(_TO_STD)
    try:
        return binascii.a2b_base64(usable)
    except (binascii.Error, ValueError):
        return b""


def _looks_encoded(line: str) -> bool:
    """A last line that goes on with text after it is taken as base64 only when it is no word."""
    return len(line) >= 4 and _WORD.fullmatch(line) is None


def _span_end(text: str, start: int) -> int:
    """Where base64 that starts at `start` ends: its run, its `=` padding, and the lines it is
    wrapped over.

    Wrapped base64 has lines of one width W (16 to `_MAX_WRAP` characters; MIME uses 76, PEM 64,
    YAML's `!!binary` whatever its writer chose), the last one possibly shorter, each line indented
    alike. The first line (from `start`) sets W; a following line belongs to the span when every
    line before it had width W and it is wholly base64 and no wider than W. A line that is
    shorter, padded, or followed by more text on its line is the last one, and is taken only when
    the total length stays a possible base64 length and it is not a short plain word or number
    (`after`, `Thanks`, `42`) — and, when text follows it on its line unpadded, only when it
    is at least 4 characters long and no word at all. So the text that follows an image is not
    swallowed with it.
    """
    run = _RUN_AT.match(text, start)
    end = run.end() if run else start
    pad = _PADDING_AT.match(text, end)
    if pad is not None:
        return pad.end()
    width = end - start
    if not 16 <= width <= _MAX_WRAP:
        return end
    total = width
    indent: str | None = None
    while True:
        brk = _BREAK_AT.match(text, end)
        if brk is None:
            return end
        margin = _INDENT_AT.match(text, brk.end())
        assert margin is not None  # it matches the empty string
        if indent is None:
            indent = margin.group()
        elif margin.group() != indent:
            return end
        line = _RUN_AT.match(text, margin.end())
        if line is None:  # a line of padding alone ends it, when the length comes out right
            pad = _PADDING_AT.match(text, margin.end())
            if pad is not None and (total + len(pad.group())) % 4 == 0:
                return pad.end()
            return end
        chars = line.group()
        pad = _PADDING_AT.match(text, line.end())
        stop = pad.end() if pad else line.end()
        clean_end = _LINE_END_AT.match(text, stop) is not None
        if len(chars) > width or not (clean_end or _TEXT_GOES_ON_AT.match(text, stop)):
            return end
        if len(chars) == width and clean_end and pad is None:
            total += width
            end = stop
            continue
        # the last line
        total += len(chars)
        if pad is None and total % 4 == 1:
            return end
        if pad is not None and (total + len(pad.group())) % 4:
            return end
        if pad is None and len(chars) < 16 and _WORD.fullmatch(chars):
            return end
        if pad is None and not clean_end and not _looks_encoded(chars):
            return end
        return stop


def media_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, what) of each piece of media in `text`, in order, never overlapping."""
    found: list[tuple[int, int, str]] = []
    if len(text) < _MIN_MEDIA_CHARS:
        return found
    if len(text) >= BLOB_RUN_CHARS:
        for blob in _BLOB_RUN.finditer(text):
            pad = _PADDING_AT.match(text, blob.end())
            found.append((blob.start(), pad.end() if pad else blob.end(), "blob"))
    starts = [0, *(blob[1] for blob in found)]
    ends = [*(blob[0] for blob in found), len(text)]
    for gap_start, gap_end in zip(starts, ends, strict=True):
        position = gap_start
        while (candidate := _CANDIDATE.search(text, position, gap_end)) is not None:
            start = candidate.start()
            look = _Look(text, start)
            what = _identify(look) if len(look.head) >= 3 else None
            if what is None:
                position = start + 1
                continue
            end = _span_end(text, start)
            if end - start < _MIN_MEDIA_CHARS:
                position = start + 1
                continue
            found.append((start, end, what))
            position = end
    found.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, what in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, what))
    return merged


def _describe(start: int, end: int, what: str) -> str:
    if what == "blob":
        return f"a base64 run of {end - start} characters (a blob: {BLOB_RUN_CHARS}+ characters)"
    return f"a base64 run of {end - start} characters with the signature of a {what}"


def find_media(text: str) -> str | None:
    """What the first piece of media in `text` is, in words; None when there is none."""
    for start, end, what in media_spans(text):
        return _describe(start, end, what)
    return None


def _strings(value: object, shortest: int = 0) -> list[str]:
    """Every string of a decoded JSON document (keys too) at least `shortest` long, in document
    order; a walk with a stack of its own, as events are walked on every turn."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= shortest:
                found.append(item)
        elif isinstance(item, dict):
            for key, inner in reversed(item.items()):
                stack += (inner, key)
        elif isinstance(item, list):
            stack += reversed(item)
    return found


_QUICK_RUN_CHARS = 16
"""The first line of any media piece is at least this long (base64 is wrapped at 64 or 76)."""
_QUICK_RUN = re.compile(rf"[A-Za-z0-9+/_=-]{{{_QUICK_RUN_CHARS},}}")
_HEX = re.compile(r"[0-9a-f]+")
"""Digests: no signature's spelling is lowercase hex (each has an upper-case letter or a symbol
within its first characters), so a hex run needs no closer look."""


def find_pixel_leak(body: bytes) -> str | None:
    """The first piece of media in any string of an encoded event (JSON), in words, or None.

    Every event is checked when it is sealed (and an envelope a store did not see sealed, when
    the store takes it), so the common case is fast: JSON writes base64 characters as they are, so when no run of `_QUICK_RUN_CHARS`
    base64 characters in the whole JSON holds a signature's spelling (hex digests never do) and
    nothing is long enough to be a blob, there is no media, without looking at each string."""
    raw = body.decode("utf-8", "replace")
    if not _may_hold_media(raw):
        return None
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError:
        document = body.decode("utf-8", "replace")
    for text in _strings(document, _MIN_MEDIA_CHARS):
        leak = _known_leak(text) if len(text) <= _REMEMBERED_CHARS else _leak(text)
        if leak is not None:
            return leak
    return None


_REMEMBERED_CHARS = 4096
"""Strings up to this long have their verdict remembered (the last 512 of them: 2 MiB of ASCII,
8 MiB at most): a turn's start carries the same tool descriptions and schemas every time. The
strings stay in the process's memory as long as they are remembered, as the turn's own texts
do while it runs; nothing is written anywhere."""


def _leak(text: str) -> str | None:
    # the same quick look, string by string: a tool's name (`cam__live_view_image` spells the
    # start of an MP3 frame) sends the whole body here, not each of its strings
    return find_media(text) if _may_hold_media(text) else None


_known_leak = functools.lru_cache(maxsize=512)(_leak)


def _may_hold_media(text: str) -> bool:
    """False when no run of `_QUICK_RUN_CHARS` base64 characters in `text` holds a signature's
    spelling (hex runs never do) and nothing is long enough to be a blob."""
    return len(text) >= BLOB_RUN_CHARS or any(
        _CANDIDATE.search(text, run.start(), run.end())
        for run in _QUICK_RUN.finditer(text) if not _HEX.fullmatch(run.group()))


def vetted_body(event: TurnEvent) -> bytes:
    """The event's JSON body, as a store keeps it; `PixelLeakError` when it holds pixels."""
    body = encode_event(event)
    leak = find_pixel_leak(body)
    if leak is not None:
        raise PixelLeakError(f"refusing to record {type(event).__name__}: it holds {leak}")
    return body


def elide_base64(text: str) -> str:
    """`text` with each piece of media replaced by `[base64 omitted: N characters]`.

    A text block holding an image is a server sending it the wrong way: the model cannot look at
    it and the store must not keep it. Any other text comes back as the same string, unchanged.
    """
    for _ in range(4):  # a replacement can only shorten what a candidate reads; settle in a pass
        spans = list(media_spans(text))
        if not spans:
            return text
        pieces = []
        cursor = 0
        for start, end, _what in spans:
            pieces.append(text[cursor:start])
            pieces.append(MARKER.format(n=end - start))
            cursor = end
        pieces.append(text[cursor:])
        text = "".join(pieces)
    return text
