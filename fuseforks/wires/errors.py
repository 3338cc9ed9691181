"""The errors a wire raises, parsing of each provider's error body, and what a refusal is about.

Provider error bodies differ (Anthropic `{"type":"error","error":{type,message}}`, OpenAI
`{"error":{message,type,param,code}}`, Gemini `{"error":{code,message,status}}`, sometimes
wrapped in a list, xAI `{"code":…,"error":…}`); `parse_error_body` reads all of them into one
`ErrorBody` so the rest of the engine never looks at provider JSON. Messages are provider text,
never request content, and the client scrubs API keys out of them before raising.

`refusal_kind` decides what a refusal is about (`RefusalKind`) from the provider's code, type and
param fields and from message patterns, with every URL (and `data:` URL) taken out of the message
first: a link to documentation that happens to contain "image" or "multimodal" names nothing.
In order, first match wins:

1. `placement` (status 400/413/422) — images are not accepted where they were put: Gemini before
   3 refusing `function_response.parts`, OpenAI's "Image URLs are only allowed for messages with
   role 'user'", Gemini's OpenAI-compatible endpoint refusing `image_url` in a tool message, a
   Responses server that takes only text as a tool output (a type refusal of
   `input[N].output`, the field that holds a tool result's images), vLLM's "tool message content
   only supports text content", Bedrock's "This model doesn't support the image field for user
   messages" (a `toolResult` sits in a user message; Converse takes its images only for Claude
   and Nova).
2. `image` (status 400/413/422) — the images themselves: a code or param that names an image
   (`invalid_image_format`, `…image_url`), or a message such as "Could not process image",
   "Invalid image data", "Unable to process input image", "Provided image is not valid", "does
   not represent a valid image", "unsupported image", "image exceeds …", "does not match the
   provided media type", "Unsupported MIME type", or a model that takes no images at all; or a
   message whose leading field path points into an image (Anthropic's
   `messages.83.content.0.tool_result.content.1.image.source.base64: The image was specified
   using the image/jpeg media type, …`): a path comes first, yet the image is what it names;
   Bedrock's "does not match the specified image format" and its validation of a field path
   into an image (`Value at '….image.format' failed to satisfy constraint`).
3. `other` for a request that is too long (`context_length_exceeded`): it names the messages, yet
   it is no parameter's fault, and fewer images may well fit; and for a content filter's refusal
   (Azure's `content_filter`, whose `param` is `prompt`): it may be what the tool images show
   that tripped it, so a request that carried some goes down the ladder, and a prompt that trips
   it without them is refused again and ends the turn with the provider's words.
4. `parameter` (status 400/404/413/422) — a parameter, the model or the request's shape: code
   `unsupported_parameter`, `unsupported_value`, `unknown_parameter`, `model_not_found` or
   `invalid_model` (Perplexity's unknown model, a 400 that must not blame the images), Bedrock's
   "The provided model identifier is invalid" (a 400 too), Azure's missing deployment; any
   other non-empty `param`; "Unsupported parameter/value", "Unrecognized request argument",
   "unknown field", Gemini's "Unknown name" and "Invalid value at", "The model … does not exist",
   "… is not found for API version"; a message that starts with a field path (Anthropic's
   `max_tokens: 128001 > 64000 …`, `messages: …`) or a quoted field (`` `max_tokens` must … ``).
5. `other` — anything else; a 400 that names nothing is `other`.

408, 429 and 5xx are not refusals: they are retryable.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

import msgspec

from fuseforks.core.errors import WireError, WireRejected, WireRetryable
from fuseforks.core.names import RefusalKind, WireName

IMAGE_STATUSES = frozenset({400, 413, 422})
"""Statuses whose refusal can be about the tool images."""
PARAMETER_STATUSES = frozenset({400, 404, 413, 422})
"""Statuses whose refusal can name a parameter or the model (an unknown model is a 404)."""

_URL = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bdata:[a-z]+/|\bwww\.)\S*", re.IGNORECASE)


def _any(*patterns: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)


_PLACEMENT_MESSAGES = _any(
    r"function_?response\.parts`? (?:is|are) not supported",
    r"image urls? (?:is|are) only allowed for messages with role",
    r"invalid content part type: image_url",
    r"output of tool call should be",
    r"invalid type for 'input\[\d+\]\.output'",
    r"tool message content only supports text",
    r"(?:does not|doesn't) support the image field for user messages",
)
_PLACEMENT_PARAM = re.compile(r"input\[\d+\]\.output")  # the whole output field, fullmatch

_IMAGE_WORDS = _any(r"image", r"inline_?data")  # in a code or a param
_IMAGE_MESSAGES = _any(
    r"could not process (?:the )?image",
    r"invalid image",
    r"unable to process (?:the )?(?:input )?image",
    r"image (?:is|was) not valid",
    r"not (?:represent )?a valid image",
    r"unsupported image",
    r"image (?:exceeds|is too (?:large|big)|too large|size exceeds)",
    r"image data",
    r"does not match the provided media type",
    r"the image appears to be",
    r"unsupported (?:mime|media) type",
    r"inline_?data",
    r"image_url is only supported by certain models",
    r"(?:does not|doesn't) support (?:image|vision)",
    r"images? (?:input )?(?:is|are) not supported",
    r"unknown variant .?image",
    r"does not match the specified image format",
    r"image size must be",
    r"'[^']*\bimage\.(?:format|source)[^']*' failed to satisfy",
)

_OTHER_CODES = frozenset({"context_length_exceeded", "content_filter"})
_PARAMETER_CODES = frozenset({"unsupported_parameter", "unsupported_value", "unknown_parameter",
                              "model_not_found", "invalid_model"})
_PARAMETER_MESSAGES = _any(
    r"unsupported (?:parameter|value)",
    r"unknown parameter",
    r"unrecognized request argument",
    r"unknown (?:field|name)\b",
    r"invalid value at '",
    r"\bmodel\b.{0,100}?(?:does not exist|not found)",
    r"is not found for api version",
    r"model identifier is invalid",
    r"\bdeployment for this resource does not exist",
)
# A message that starts with a field path or a quoted field (Anthropic): lower-case identifiers.
_FIELD_FIRST = re.compile(r"^(?:([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*): |`([a-z_][a-z0-9_.]*)`)")


class ErrorBody(NamedTuple):
    """The fields of a provider error body; empty strings when absent."""

    error_type: str
    code: str
    message: str
    param: str


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


def parse_error_body(body: bytes) -> ErrorBody:
    """The fields of any known provider error shape."""
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return ErrorBody("", "", body[:200].decode("utf-8", "replace").strip(), "")
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]  # Gemini sometimes wraps the error object in a list
    if not isinstance(data, dict):
        return ErrorBody("", "", "", "")
    error = data.get("error")
    if isinstance(error, dict):
        error_type = _text(error.get("type") or error.get("status"))
        return ErrorBody(error_type, _text(error.get("code")), _text(error.get("message")),
                         _text(error.get("param")))
    if isinstance(error, str):  # xAI: {"code": "...", "error": "..."}
        return ErrorBody("", _text(data.get("code")), error, "")
    return ErrorBody(_text(data.get("type") or data.get("__type")), _text(data.get("code")),
                     _text(data.get("message") or data.get("Message") or data.get("detail")),
                     _text(data.get("param")))


def refusal_kind(status: int, error: ErrorBody) -> RefusalKind:
    """What a refusal with this status and body is about (see the module docstring)."""
    message = _URL.sub(" ", error.message)
    codes = {error.code.lower(), error.error_type.lower()} - {""}
    field = _FIELD_FIRST.match(message.strip())
    path = (field.group(1) or field.group(2)) if field else ""
    if status in IMAGE_STATUSES:
        if _PLACEMENT_MESSAGES.search(message) or _PLACEMENT_PARAM.fullmatch(error.param):
            return "placement"
        if (_IMAGE_MESSAGES.search(message) or _IMAGE_WORDS.search(error.param)
                or _IMAGE_WORDS.search(path)
                or any(_IMAGE_WORDS.search(code) for code in codes)):
            return "image"
    if status not in PARAMETER_STATUSES or codes & _OTHER_CODES:
        return "other"
    if (codes & _PARAMETER_CODES or error.param or _PARAMETER_MESSAGES.search(message)
            or field):
        return "parameter"
    return "other"


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
    parsed = parse_error_body(body)
    error_type, code = parsed.error_type, parsed.code
    code = error_type or code if code_from == "type" else code or error_type
    fields: dict[str, Any] = {
        "wire": wire, "status": status, "error_class": error_class(status),
        "error_type": error_type, "code": code, "message": parsed.message,
    }
    if status == 429 or status >= 500 or status == 408:
        return WireRetryable(**fields)
    return WireRejected(refusal=refusal_kind(status, parsed), **fields)
