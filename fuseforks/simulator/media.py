"""Reading images out of requests the way providers do: strict base64, declared type checked
against the bytes (Anthropic answers 400 when they disagree), data URLs parsed."""

from __future__ import annotations

import base64
import binascii
import re

from fuseforks.simulator.eyes import media_type_of
from fuseforks.simulator.shapes import Invalid

ACCEPTED = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})
_DATA_URL = re.compile(r"data:(?P<type>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)", re.DOTALL)


_URL_SAFE = str.maketrans("-_", "+/")


def decode_image(data: str, declared: str, where: str, *, proto_bytes: bool = False) -> bytes:
    """`proto_bytes`: a proto3 JSON `bytes` field (Gemini), which takes the standard or the
    URL-safe alphabet, padded or not; otherwise the standard alphabet, padded, only."""
    if declared not in ACCEPTED:
        raise Invalid(f"{where}: unsupported image media type {declared!r}")
    if proto_bytes and not ("+" in data and "-" in data) and not ("/" in data and "_" in data):
        data = data.translate(_URL_SAFE).rstrip("=")
        data += "=" * (-len(data) % 4)
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise Invalid(f"{where}: image data is not valid base64") from None
    actual = media_type_of(raw)
    if actual is None:
        raise Invalid(f"{where}: could not process image")
    if actual != declared:
        raise Invalid(f"{where}: Image does not match the provided media type {declared}")
    return raw


def decode_data_url(url: str, where: str) -> bytes:
    match = _DATA_URL.fullmatch(url)
    if match is None:
        raise Invalid(f"{where}: image_url must be a base64 data URL")
    return decode_image(match["data"], match["type"], where)
