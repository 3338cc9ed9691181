"""Which image formats fuseforks carries, and how each one's size is known before decoding.

The format of an image comes from its magic number (`fuseforks.core.signatures`); this module
says what happens to each format named there, as one table (`FORMAT_FATES`) that the image rules
document repeats and a test holds to it. Carried formats go through the same pipeline and limits:
the edge limit and the decode budget are checked from the header before any pixel is decoded —
by fuseforks' own header walk for JPEG, PNG, WebP and ICO, and by the decoder's header parse
(Pillow opens lazily: it reads the header and decodes nothing until `load`) for the others.

AVIF is carried because Pillow's own wheels decode it (libavif), so it costs no new dependency.
HEIF is not: it would need the `pillow-heif` plugin, a second wheel bundling libheif and an HEVC
decoder (libde265) for untrusted bytes, for a format MCP servers rarely return — a HEIC photo
reaches the model as a note, and a server can send JPEG instead. SVG is markup, not pixels: it
stays text (no rasterizer here is worth a browser engine's attack surface).
"""

from __future__ import annotations

from fuseforks.core.media import DECODE_MAX_PIXELS, WEBP_DECODE_MAX_PIXELS

FORMAT_FATES: dict[str, str] = {
    "JPEG": "carried: passed through when whole and within the limits, else re-encoded",
    "PNG": "carried: a small still PNG is passed through, any other is re-encoded",
    "WEBP": "carried: passed through when still, whole and within the limits, else re-encoded",
    "GIF": "carried: its first frame, re-encoded; the model is told how many frames it had",
    "BMP": "carried: re-encoded",
    "TIFF": "carried: its first page, re-encoded; the model is told how many pages it had",
    "ICO": "carried: its largest image, re-encoded",
    "AVIF": "carried: its first frame, re-encoded (Pillow's own AVIF decoder)",
    "HEIF": "not carried: it needs the pillow-heif plugin (libheif and an HEVC decoder)",
    "CUR": "not carried: a mouse cursor, not a picture a tool returns",
    "PSD": "not carried: a layered editing document",
    "JPEG2000": "not carried: rare in tool output, a decoder fuseforks does not need",
    "JXL": "not carried: Pillow has no JPEG XL decoder",
    "QOI": "not carried: rare in tool output",
    "DDS": "not carried: a GPU texture",
    "ICNS": "not carried: an icon bundle of macOS applications",
    "PDF": "not carried: a document, not an image",
    "SVG": "not carried: markup; it stays text",
}
"""Every format the magic-number table names, and what happens to an image in it."""

CARRIED_FORMATS = frozenset(name for name, fate in FORMAT_FATES.items() if fate.startswith("carried"))

HEADER_WALKED = frozenset({"JPEG", "PNG", "WEBP"})
"""Formats whose size, animation and wholeness fuseforks reads with its own header walk
(`fuseforks.images.probe`): they may pass through byte for byte. ICO's entries are walked too,
for the budget only (`ico_entry_sizes`)."""

PAGED_FORMATS = frozenset({"TIFF"})
"""Formats whose further images are pages, not frames of an animation."""


def decode_budget(fmt: str) -> int:
    """Decoded pixels one image of `fmt` may need. WebP's and AVIF's decoders hold each pixel
    several times while they load (the codec's frame, a copy, the image), so they get half."""
    return WEBP_DECODE_MAX_PIXELS if fmt in ("WEBP", "AVIF") else DECODE_MAX_PIXELS
