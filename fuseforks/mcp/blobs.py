"""What an embedded blob resource is: an image, text in bytes, or something the model cannot read.

MCP servers embed files as `BlobResourceContents` (base64) — `read_media_file`-style tools send a
PNG that way, and many send JSON or plain text as a blob too. An image blob goes through the image
pipeline like an image block (its magic number decides, as for every image: a blob whose bytes
are an image is one whatever its `mimeType` says, and a blob labelled `image/*` is tried as one);
a blob whose `mimeType` names text (`text/*`, JSON, XML, YAML, JavaScript, TOML, or any `+json` /
`+xml` type) is decoded in its charset (UTF-8 unless the type names another) and reaches the model
as text under its URI, and so does an SVG (markup, not pixels); anything else (a PDF, audio, an
archive), or text that does not decode, stays a note.
"""

from __future__ import annotations

import binascii
import codecs
import mimetypes
from typing import Literal

from fuseforks.core.signatures import sniff_format

BlobKind = Literal["image", "text", "other"]

_TEXT_APPLICATION = frozenset({
    "json", "xml", "yaml", "x-yaml", "javascript", "ecmascript", "x-javascript", "toml",
    "x-toml", "sql", "graphql", "ld+json", "x-ndjson", "ndjson", "csv",
})
_HEAD_CHARS = 24  # base64 characters for 18 bytes: enough for every magic number


def _media_type(mime_type: str | None) -> tuple[str, dict[str, str]]:
    """The type without parameters, lower case, and its parameters (`charset=...`)."""
    if not mime_type:
        return "", {}
    kind, *parameters = (part.strip() for part in mime_type.split(";"))
    named = dict(p.split("=", 1) for p in parameters if "=" in p)
    return kind.lower(), {k.strip().lower(): v.strip().strip('"') for k, v in named.items()}


def _head(blob: str) -> bytes:
    try:
        return binascii.a2b_base64(blob[:_HEAD_CHARS])
    except (binascii.Error, ValueError):
        return b""


def declared_type(uri: str, mime_type: str | None) -> str | None:
    """The blob's own type, or the one its URI's extension names when it declares none (or only
    `application/octet-stream`, which says nothing)."""
    kind, _ = _media_type(mime_type)
    if kind and kind != "application/octet-stream":
        return mime_type
    guessed, _ = mimetypes.guess_type(uri, strict=False)
    return guessed or mime_type


def blob_kind(blob: str, mime_type: str | None) -> BlobKind:
    kind, _ = _media_type(mime_type)
    sniffed = sniff_format(_head(blob))
    if kind == "image/svg+xml" or sniffed == "SVG":
        return "text"  # markup: it stays text
    if sniffed == "PDF":
        return "other"
    if kind.startswith("image/") or sniffed is not None:
        return "image"
    major, _, minor = kind.partition("/")
    if major == "text" or (major == "application" and (
            minor in _TEXT_APPLICATION or minor.endswith(("+json", "+xml")))):
        return "text"
    return "other"


def blob_text(blob: str, mime_type: str | None) -> str | None:
    """The text a text blob holds, or None when it is not base64 or not text in its charset."""
    _, parameters = _media_type(mime_type)
    charset = parameters.get("charset", "utf-8")
    try:
        codecs.lookup(charset)
        return binascii.a2b_base64(blob, strict_mode=True).decode(charset)
    except (LookupError, binascii.Error, ValueError):
        return None
