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


class WireError(Exception):
    """Base of every provider-call failure; fields are safe to log (no keys, no image data)."""

    def __init__(
        self,
        *,
        wire: str,
        status: int | None,
        error_class: str,
        error_type: str = "",
        code: str = "",
        message: str = "",
    ) -> None:
        self.wire = wire
        self.status = status
        self.error_class = error_class
        self.error_type = error_type
        self.code = code
        self.message = message
        super().__init__(self._describe())

    def _describe(self) -> str:
        parts = [f"backend={self.wire}", f"status={self.status if self.status is not None else '-'}"]
        parts.append(f"class={self.error_class}")
        if self.error_type:
            parts.append(f"type={self.error_type}")
        if self.code:
            parts.append(f"code={self.code}")
        text = f"{type(self).__name__}: " + " ".join(parts)
        return f"{text}: {self.message}" if self.message else text


class WireRejected(WireError):
    """A 4xx the provider will refuse again if resent unchanged: never retried at the HTTP layer.

    `images_rejected` is true when the refusal is about the images (400/413/422 whose code or
    message names them, or the second 400 of the openai-compat JPEG fallback).
    """

    def __init__(self, *, images_rejected: bool = False, **fields: Any) -> None:
        self.images_rejected = images_rejected
        self.attempts = 1  # requests sent before the refusal (set by the client)
        super().__init__(**fields)


class WireRetryable(WireError):
    """429, 5xx or a transport failure: worth another attempt after a delay."""

    def __init__(self, *, retry_after: float | None = None, **fields: Any) -> None:
        self.retry_after = retry_after
        super().__init__(**fields)


class WireUnavailable(WireError):
    """Retries exhausted; `attempts` says how many requests were sent."""

    def __init__(self, *, attempts: int, **fields: Any) -> None:
        self.attempts = attempts
        super().__init__(**fields)

    def _describe(self) -> str:
        return f"{super()._describe()} (gave up after {self.attempts} attempts)"


class WireGarbage(WireError):
    """A 2xx whose body is not the response shape the wire expects."""


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
    wire: str, status: int, body: bytes, *, code_from: Literal["code", "type"] = "code"
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
