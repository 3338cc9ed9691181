"""Simulated Gemini generateContent endpoint (proto3 JSON, unknown fields refused).

proto3 JSON takes a field by its JSON name (camelCase) or its proto name (snake_case), and
`bytes` in the standard or the URL-safe base64 alphabet: the body is normalized to camelCase
(`normalize`) before the strict checks, and image data decoded in either alphabet.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

import msgspec

from fuseforks.simulator import streams
from fuseforks.simulator.brain import (
    FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES,
    Answer,
    CallTools,
    Conversation,
    RefuseImages,
    Script,
    decide,
)
from fuseforks.simulator.media import decode_image
from fuseforks.simulator.shapes import Invalid, Reply, Streamed, convert, json_reply

WIRE = "gemini"


class _Strict(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    pass


class Blob(_Strict):
    mime_type: str
    data: str


class FunctionCall(_Strict):
    name: str
    args: dict[str, Any] = {}
    id: str | None = None
    will_continue: bool | None = None


class ResponsePart(_Strict):
    inline_data: Blob


class FunctionResponse(_Strict):
    name: str
    response: dict[str, Any]
    id: str | None = None
    parts: list[ResponsePart] | None = None
    will_continue: bool | None = None
    scheduling: str | None = None


class Part(_Strict):
    text: str | None = None
    inline_data: Blob | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    thought_signature: str | None = None
    thought: bool | None = None


class Content(_Strict):
    parts: list[Part]
    role: Literal["user", "model"] = "user"


class Declaration(_Strict):
    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None
    parameters_json_schema: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    response_json_schema: dict[str, Any] | None = None
    behavior: str | None = None


class Tool(_Strict):
    function_declarations: list[Declaration]


class GenerationConfig(_Strict):
    """google-genai's `GenerationConfig` fields the Gemini API takes."""

    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: float | None = None
    candidate_count: int | None = None
    stop_sequences: list[str] | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_logprobs: bool | None = None
    logprobs: int | None = None
    response_mime_type: str | None = None
    response_schema: dict[str, Any] | None = None
    response_json_schema: Any = None
    response_modalities: list[Literal["TEXT", "IMAGE", "AUDIO", "MODALITY_UNSPECIFIED"]] | None = None
    media_resolution: str | None = None
    speech_config: dict[str, Any] | None = None
    thinking_config: dict[str, Any] | None = None
    enable_enhanced_civic_answers: bool | None = None


class SafetySetting(_Strict):
    category: str
    threshold: str
    method: str | None = None


class Request(_Strict):
    contents: list[Content]
    system_instruction: Content | None = None
    tools: list[Tool] = []
    tool_config: dict[str, Any] | None = None
    safety_settings: list[SafetySetting] | None = None
    generation_config: GenerationConfig | None = None
    cached_content: str | None = None


# Values that are free-form JSON (function arguments and results, JSON schemas): their keys are
# data, not field names, so normalization leaves them as they are.
_OPAQUE = frozenset({"args", "response", "parameters", "parametersJsonSchema", "responseSchema",
                     "responseJsonSchema"})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def normalize(value: object, renamed: dict[str, str], where: str = "") -> object:
    """The request with every proto field name in its JSON (camelCase) spelling (`renamed` maps
    each new spelling to the one sent, for error messages); both spellings of one field in one
    object are refused, as a field given twice is."""
    if isinstance(value, list):
        return [normalize(item, renamed, where) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, object] = {}
    for key, item in value.items():
        name = _camel(key)
        if name != key:
            renamed.setdefault(name, key)
        if name in out:
            raise Invalid(f"Invalid JSON payload received. Duplicate field \"{name}\" at "
                          f"'{where or 'request'}'.")
        out[name] = item if name in _OPAQUE else normalize(item, renamed,
                                                           f"{where}.{name}".lstrip("."))
    return out


def _convert(payload: object) -> Request:
    """The strict conversion of the normalized body; an unknown field is named as it was sent."""
    renamed: dict[str, str] = {}
    try:
        request = convert(normalize(payload, renamed), Request, "body")
    except Invalid as exc:
        message = exc.message
        for name, sent in renamed.items():
            message = message.replace(f"`{name}`", f"`{sent}`")
        raise Invalid(message) from None
    assert isinstance(request, Request)
    return request


def _one_field(part: Part, where: str) -> None:
    set_fields = [f for f in ("text", "inline_data", "function_call", "function_response")
                  if getattr(part, f) is not None]
    if len(set_fields) != 1:
        raise Invalid(f"{where}: a part must have exactly one data field, found {set_fields}")


def _read(request: Request, model: str) -> Conversation:
    if not request.contents:
        raise Invalid("* GenerateContentRequest.contents: contents is not specified")
    rounds = 0
    seen: list[bytes] = []
    latest: list[bytes] = []
    calls_open = 0
    for n, content in enumerate(request.contents):
        where = f"contents[{n}]"
        responses = [p.function_response for p in content.parts if p.function_response]
        if calls_open and len(responses) != calls_open:
            raise Invalid("Please ensure that the number of function response parts is equal to "
                          "the number of function call parts of the function call turn.")
        if responses and not calls_open:
            raise Invalid(f"{where}: function response turn comes without a function call turn")
        calls_open = 0
        for m, part in enumerate(content.parts):
            _one_field(part, f"{where}.parts[{m}]")
        if content.role == "model":
            if any(p.function_call and not p.thought_signature for p in content.parts):
                raise Invalid(f"Function call is missing a thought_signature in functionCall "
                              f"parts ({where}).")
            latest = []
            calls_open = sum(1 for p in content.parts if p.function_call)
            rounds += bool(calls_open)
            continue
        for m, part in enumerate(content.parts):
            blobs = [part.inline_data] if part.inline_data else []
            if part.function_response and part.function_response.parts:
                blobs += [p.inline_data for p in part.function_response.parts]
            for blob in blobs:
                latest.append(decode_image(blob.data, blob.mime_type, f"{where}.parts[{m}]",
                                           proto_bytes=True))
                seen.append(latest[-1])
    if calls_open:
        raise Invalid("the last function call turn has no function response turn")
    tools = [d.name for t in request.tools for d in t.function_declarations]
    return Conversation(model=model, tools=tools, tool_rounds_done=rounds,
                        answering_tool_round=_answering_tool_round(request.contents),
                        latest_images=latest, all_images=seen)


def _answering_tool_round(contents: list[Content]) -> bool:
    """The latest model turn called functions (their responses follow: checked above)."""
    last = next((c for c in reversed(contents) if c.role == "model"), None)
    return last is not None and any(p.function_call for p in last.parts)

# Gemini before 3, as Vertex AI and AI Studio answer it (the body comes wrapped in a list).
PARTS_REFUSED = ("Unable to submit request because `function_response.parts` is not supported for "
                 "this model. Learn more: "
                 "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling")


def _refuse_function_response_parts(request: Request, model: str) -> None:
    if not model.startswith(FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES):
        return
    if any(p.function_response and p.function_response.parts
           for content in request.contents for p in content.parts):
        raise Invalid(PARTS_REFUSED, body=[{"error": {
            "code": 400, "message": PARTS_REFUSED,
            "errors": [{"message": PARTS_REFUSED, "domain": "global", "reason": "badRequest"}],
            "status": "INVALID_ARGUMENT"}}])


def handle(payload: object, seq: int, script: Script, model: str,
           stream: Literal["sse", "json"] | None = None) -> Reply | Streamed:
    """`stream`: `streamGenerateContent` with `alt=sse` ("sse") or without ("json")."""
    request = _convert(payload)
    conversation = _read(request, model)
    _refuse_function_response_parts(request, model)
    decision = decide(conversation, script)
    if isinstance(decision, RefuseImages):
        raise Invalid(decision.message)
    if isinstance(decision, CallTools):
        parts: list[dict[str, Any]] = [
            {"functionCall": {"name": name, "args": decision.input()},
             "thoughtSignature": base64.b64encode(f"sig-{seq}-{i}".encode()).decode()}
            for i, name in enumerate(decision.names)]
    else:
        assert isinstance(decision, Answer)
        parts = [{"text": decision.text}]
    response = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 100 + seq, "candidatesTokenCount": 10,
                          "totalTokenCount": 110 + seq},
        "modelVersion": model,
    }
    if stream is None:
        return json_reply(response)
    return streams.gemini(response, as_sse=stream == "sse")
