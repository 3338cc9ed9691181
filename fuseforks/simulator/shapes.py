"""Each provider's error body, as the simulator answers it, and the shared reply types."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

JSON = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Streamed:
    """A 200 answer sent as it is made: each frame goes out on its own (a chunk of a chunked
    body), so a client sees the increments a real stream has."""

    frames: list[bytes]
    content_type: str = "text/event-stream"


class Invalid(Exception):
    """A request the provider would refuse: becomes a 4xx in that provider's error shape, or
    exactly `body` when a profile answers a provider's real error body."""

    def __init__(self, message: str, *, status: int = 400, code: str | None = None,
                 param: str | None = None, body: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.param = param
        self.body = body


_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                    500: "api_error", 503: "api_error", 529: "overloaded_error"}
_OPENAI_TYPES = {400: "invalid_request_error", 401: "invalid_request_error",
                 404: "invalid_request_error", 429: "rate_limit_exceeded", 500: "server_error",
                 503: "server_error"}
_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
_XAI_CODES = {400: "Client specified an invalid argument", 401: "Unauthenticated",
              404: "Some requested entity was not found", 429: "Some resource has been exhausted",
              500: "Internal error", 503: "The service is currently unavailable"}


# Bedrock's exceptions by status (the Converse API reference), named in `x-amzn-ErrorType`.
_AWS_TYPES = {400: "ValidationException", 403: "AccessDeniedException",
              404: "ResourceNotFoundException", 408: "ModelTimeoutException",
              424: "ModelErrorException", 429: "ThrottlingException",
              500: "InternalServerException", 503: "ServiceUnavailableException"}
AWS_TYPE_SUFFIX = ":http://internal.amazon.com/coral/com.amazon.bedrock/"
# vLLM's error `type` by status (its OpenAI-compatible server names them after the exception).
_VLLM_TYPES = {400: "BadRequestError", 404: "NotFoundError", 500: "InternalServerError"}


def error_body(wire: str, status: int, message: str, code: str | None = None,
               param: str | None = None) -> bytes:
    if wire in ("anthropic", "vertex-anthropic"):
        return JSON.encode({"type": "error", "error": {
            "type": code or _ANTHROPIC_TYPES.get(status, "api_error"), "message": message}})
    if wire in ("gemini", "vertex-gemini"):
        return JSON.encode({"error": {
            "code": status, "message": message, "status": code or _GOOGLE_STATUS.get(status, "UNKNOWN")}})
    if wire == "xai-responses":
        return JSON.encode({"code": code or _XAI_CODES.get(status, "Unknown"), "error": message})
    if wire == "bedrock-converse":
        return JSON.encode({"message": message})
    if wire == "vllm":
        return JSON.encode({"error": {"message": message, "type": _VLLM_TYPES.get(
            status, "BadRequestError"), "param": param, "code": status}})
    return JSON.encode({"error": {
        "message": message, "type": _OPENAI_TYPES.get(status, "api_error"), "param": param,
        "code": code}})


def aws_error_type(status: int) -> str:
    return _AWS_TYPES.get(status, "InternalServerException")


def error_headers(wire: str, status: int, kind: str | None = None) -> list[tuple[str, str]]:
    """What a provider says of an error in its headers: Bedrock names its type there."""
    if wire == "bedrock-converse":
        return [("x-amzn-ErrorType", (kind or aws_error_type(status)) + AWS_TYPE_SUFFIX)]
    return []


def error_reply(wire: str, error: Invalid) -> Reply:
    if error.body is not None:
        return Reply(error.status, JSON.encode(error.body), error_headers(wire, error.status))
    return Reply(error.status, error_body(wire, error.status, error.message, error.code,
                                          error.param), error_headers(wire, error.status))


def json_reply(payload: object) -> Reply:
    return Reply(200, JSON.encode(payload))


def convert(value: object, shape: type, where: str) -> object:
    """`msgspec.convert` with forbid-unknown Structs; a mismatch becomes a provider 400."""
    try:
        return msgspec.convert(value, shape)
    except msgspec.ValidationError as exc:
        raise Invalid(f"Invalid request ({where}): {exc}") from None
