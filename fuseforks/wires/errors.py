"""The errors a wire raises, and parsing of each provider's error body.

Provider error bodies differ (Anthropic `{"type":"error","error":{type,message}}`, OpenAI
`{"error":{message,type,param,code}}`, Gemini `{"error":{code,message,status}}`, xAI
`{"code":…,"error":…}`); `parse_error_body` reads all of them into (type, code, message) so the
rest of the engine never looks at provider JSON. Messages are provider text, never request
content, and the client scrubs API keys out of them before raising.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from fuseforks.core.names import WireName
from fuseforks.ports.errors import WireError, WireRejected, WireRetryable

_IMAGE_WORDS = re.compile(r"image|inline_?data|mime|media.?type|picture|vision|multimodal", re.IGNORECASE)
IMAGE_STATUSES = frozenset({400, 413, 422})


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


def parse_error_body(body: bytes) -> tuple[str, str, str]:
    """(type, code, message) from any known provider error shape; empty strings when absent."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return "", "", body[:200].decode("utf-8", "replace").strip()
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]  # Gemini sometimes wraps the error object in a list
    if not isinstance(data, dict):
        return "", "", ""
    error = data.get("error")
    if isinstance(error, dict):
        error_type = _text(error.get("type") or error.get("status"))
        code = _text(error.get("code"))
        return error_type, code, _text(error.get("message"))
    if isinstance(error, str):  # xAI: {"code": "...", "error": "..."}
        return "", _text(data.get("code")), error
    return _text(data.get("type")), _text(data.get("code")), _text(data.get("message") or data.get("detail"))


def error_class(status: int) -> str:
    if status == 429:
        return "rate_limited"
    if status >= 500:
        return "server_error"
    return "client_error"


def classify_status(
    wire: WireName, status: int, body: bytes, *, code_from: Literal["code", "type"] = "code"
) -> WireError:
    """The shared classification. `code_from` says which parsed field names the error best:
    Anthropic and Gemini name errors by type/status (`invalid_request_error`,
    `INVALID_ARGUMENT`), OpenAI-shaped APIs by `code`; the other is the fallback."""
    error_type, code, message = parse_error_body(body)
    code = error_type or code if code_from == "type" else code or error_type
    fields: dict[str, Any] = {
        "wire": wire, "status": status, "error_class": error_class(status),
        "error_type": error_type, "code": code, "message": message,
    }
    if status == 429 or status >= 500 or status == 408:
        return WireRetryable(**fields)
    about_images = bool(_IMAGE_WORDS.search(f"{code} {message}"))
    return WireRejected(images_rejected=status in IMAGE_STATUSES and about_images, **fields)
