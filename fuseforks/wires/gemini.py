"""Gemini native (`POST {base}/models/{model}:generateContent`).

Placement: native by default. A tool result with images gets `functionResponse.parts` = one
`inlineData` part per image (`mimeType`, `data`; no `displayName`, no `$ref` in the response);
without images `parts` is omitted entirely, so the encoding is the text-only one. Consecutive tool
results share one user content, matching the model's parallel calls. Alternate
(`ChatRequest.placement`, and what Gemini before 3 needs: it refuses `function_response.parts`):
no `parts` at all, and one more user content after the results holds, per result with images,
its caption as a `text` part then its `inlineData` parts.

Parameters are `parameters.GEMINI`: `generationConfig.maxOutputTokens` only when the request sets
a limit; `generationConfig` is left out when it would be empty.
"""

from __future__ import annotations

import hashlib
from typing import Any, assert_never
from urllib.parse import quote

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ImageRef,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    system_texts,
)
from fuseforks.core.errors import WireError
from fuseforks.core.names import Placement, WireName
from fuseforks.images.vault import ImageVault
from fuseforks.wires import parameters
from fuseforks.wires.base import (
    JSON,
    Carrier,
    Endpoint,
    HttpRequest,
    decode_json,
    placement_of,
    with_carriers,
)
from fuseforks.wires.errors import classify_status
from fuseforks.wires.streaming import EVENT_STREAM, decode_event, stream_cut, stream_error

NAME: WireName = "gemini"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
PLACEMENT: Placement = "native"  # tests/wires/test_placement.py checks it against the encoding
PLACEMENTS: tuple[Placement, ...] = ("native", "alternate")
PARAMETERS = parameters.GEMINI
# Gemini often returns calls without ids; we mint these so the engine can pair results, and
# never send them back (the API pairs by order and name).
SYNTHETIC_ID_PREFIX = "gemini-call-"


def _inline(image: ImageRef, vault: ImageVault) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.media_type, "data": vault.json_base64(image.digest)}}


def function_response(message: ToolResultMessage, vault: ImageVault,
                      placement: Placement = PLACEMENT) -> dict[str, Any]:
    response: dict[str, Any] = {}
    if not message.tool_call_id.startswith(SYNTHETIC_ID_PREFIX):
        response["id"] = message.tool_call_id
    response["name"] = message.name
    response["response"] = {"error" if message.is_error else "output": message.text}
    if message.images and placement == "native":
        response["parts"] = [_inline(i, vault) for i in message.images]
    return {"functionResponse": response}


def carrier_parts(message: ToolResultMessage, vault: ImageVault) -> list[dict[str, Any]]:
    """The alternate carrier's parts for one result: its caption, then its images."""
    parts: list[dict[str, Any]] = [{"text": message.caption}] if message.caption else []
    parts.extend(_inline(i, vault) for i in message.images)
    return parts


def _call_part(call: ToolCall) -> dict[str, Any]:
    function_call: dict[str, Any] = {"name": call.name, "args": call.arguments}
    if not call.id.startswith(SYNTHETIC_ID_PREFIX):
        function_call["id"] = call.id
    part: dict[str, Any] = {"functionCall": function_call}
    if call.signature:
        part["thoughtSignature"] = call.signature
    return part


def _contents(messages: list[Message], vault: ImageVault,
              placement: Placement) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None
    for message in with_carriers(messages, placement, lambda m: carrier_parts(m, vault)):
        match message:
            case ToolResultMessage():
                if results is None:
                    results = []
                    out.append({"role": "user", "parts": results})
                results.append(function_response(message, vault, placement))
                continue
            case Carrier():
                out.append({"role": "user", "parts": message.parts})
            case SystemMessage():
                continue  # joined into systemInstruction
            case UserMessage():
                out.append({"role": "user", "parts": [{"text": message.text}]})
            case AssistantMessage():
                parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
                parts.extend(_call_part(c) for c in message.tool_calls)
                out.append({"role": "model", "parts": parts})
            case _:
                assert_never(message)
        results = None
    return out


def content_body(request: ChatRequest, vault: ImageVault) -> dict[str, Any]:
    """The `GenerateContentRequest` body, which Vertex AI takes too (`vertex.py`)."""
    placement = placement_of(NAME, request, PLACEMENT, PLACEMENTS)
    params = PARAMETERS.for_model(request.model)
    body: dict[str, Any] = {"contents": _contents(request.messages, vault, placement)}
    system = "\n\n".join(system_texts(request))
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if request.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": t.name,
                        "description": t.description,
                        "parametersJsonSchema": t.input_schema,
                    }
                    for t in request.tools
                ]
            }
        ]
    config: dict[str, Any] = {}
    limit = params.limit(request.max_tokens)
    if limit is not None:
        config[params.max_tokens] = limit
    if request.temperature is not None and params.takes("temperature"):
        config["temperature"] = request.temperature
    if config:
        body["generationConfig"] = config
    return body


def model_path(model: str, *, stream: bool) -> str:
    """`/models/{model}:generateContent`, or the streaming method with `alt=sse`."""
    model = quote(model, safe="")
    if stream:
        return f"/models/{model}:streamGenerateContent?alt=sse"
    return f"/models/{model}:generateContent"


def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
           stream: bool = False) -> HttpRequest:
    body = content_body(request, vault)
    headers = {"content-type": "application/json", **endpoint.auth("x-goog-api-key")}
    if stream:  # the same body; the answer comes as `data:` frames of GenerateContentResponse
        headers["accept"] = EVENT_STREAM
    return HttpRequest(url=endpoint.url(model_path(request.model, stream=stream)),
                       headers=headers, body=JSON.encode(body))


def encode_stream(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    """The same request to `:streamGenerateContent?alt=sse`."""
    return encode(request, vault, endpoint, stream=True)


class _FunctionCall(msgspec.Struct, frozen=True):
    name: str
    args: dict[str, Any] = {}
    id: str | None = None


class _Part(msgspec.Struct, frozen=True, rename="camel"):
    text: str | None = None
    thought: bool = False
    function_call: _FunctionCall | None = None
    thought_signature: str | None = None


class _Content(msgspec.Struct, frozen=True):
    parts: list[_Part] = []


class _Candidate(msgspec.Struct, frozen=True, rename="camel"):
    content: _Content = _Content()
    finish_reason: str | None = None


class _UsageMetadata(msgspec.Struct, frozen=True, rename="camel"):
    prompt_token_count: int = 0
    candidates_token_count: int = 0
    thoughts_token_count: int = 0
    cached_content_token_count: int = 0
    tool_use_prompt_token_count: int = 0


class _Response(msgspec.Struct, frozen=True, rename="camel"):
    candidates: list[_Candidate] = []
    usage_metadata: _UsageMetadata = _UsageMetadata()
    model_version: str = ""


_STOPS = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens", "SAFETY": "content_filter",
          "PROHIBITED_CONTENT": "content_filter", "BLOCKLIST": "content_filter",
          "RECITATION": "content_filter"}


def decode(body: bytes) -> ChatResponse:
    return _chat_response(decode_json(NAME, body, _Response))


_CANONICAL = msgspec.json.Encoder(order="sorted")


def _tag(text: str, candidate: _Candidate, data: _Response) -> str:
    """What minted call ids are derived from: the answer's content (text, calls, finish reason,
    usage, model), not the bytes it came in, so the same answer streamed or whole, and again in a
    replay, mints the same ids."""
    calls = [[p.function_call.name, p.function_call.args, p.thought_signature]
             for p in candidate.content.parts if p.function_call is not None]
    content = [text, calls, candidate.finish_reason, data.usage_metadata, data.model_version]
    return hashlib.sha256(_CANONICAL.encode(content)).hexdigest()[:12]


def _chat_response(data: _Response) -> ChatResponse:
    u = data.usage_metadata
    usage = Usage(  # promptTokenCount already includes cachedContentTokenCount
        input_tokens=u.prompt_token_count + u.tool_use_prompt_token_count,
        output_tokens=u.candidates_token_count + u.thoughts_token_count,
        cache_read_tokens=u.cached_content_token_count,
    )
    if not data.candidates:  # blocked prompt: no candidate at all
        return ChatResponse(text="", tool_calls=[], usage=usage, stop_reason="content_filter",
                            raw_model=data.model_version)
    candidate = data.candidates[0]
    calls: list[ToolCall] = []
    text = "".join(p.text for p in candidate.content.parts if p.text and not p.thought)
    tag = _tag(text, candidate, data)
    for part in candidate.content.parts:
        if part.function_call is not None:
            call_id = part.function_call.id or f"{SYNTHETIC_ID_PREFIX}{tag}-{len(calls)}"
            calls.append(ToolCall(id=call_id, name=part.function_call.name,
                                  arguments=part.function_call.args,
                                  signature=part.thought_signature))
    stop = _STOPS.get(candidate.finish_reason or "", candidate.finish_reason or "other")
    return ChatResponse(text=text, tool_calls=calls, usage=usage,
                        stop_reason="tool_use" if calls else stop, raw_model=data.model_version)


def classify(status: int, body: bytes) -> WireError:
    return classify_status(NAME, status, body, code_from="type")


# --- streaming (`:streamGenerateContent?alt=sse`) -----------------------------------------------

class _FrameError(msgspec.Struct, frozen=True):
    code: int = 500
    message: str = ""
    status: str = ""


class _Frame(msgspec.Struct, frozen=True, rename="camel"):
    candidates: list[_Candidate] = []
    usage_metadata: _UsageMetadata | None = None
    model_version: str = ""
    prompt_feedback: dict[str, Any] | None = None
    error: _FrameError | None = None


class StreamAccumulator:
    """Gemini's `data:` frames, each a `GenerateContentResponse` holding the next parts of the
    first candidate: text pieces are joined (answer and thought text apart), function calls and
    signatures kept in order; `finishReason`, usage and model version come from the last frame
    that has them. A frame with a `finishReason` (or a blocked prompt's `promptFeedback`) ends
    the answer; an `{"error": …}` frame fails it."""

    def __init__(self) -> None:
        self._parts: list[_Part] = []
        self._finish: str | None = None
        self._usage = _UsageMetadata()
        self._model = ""
        self._candidate = False
        self._ended = False

    def feed(self, event: str, data: str) -> str:
        frame = decode_event(NAME, data, _Frame)
        if frame.error is not None:
            error = frame.error
            status = error.code if error.code >= 400 else 500
            raise stream_error(NAME, classify, status, {"error": msgspec.structs.asdict(error)})
        if frame.usage_metadata is not None:
            self._usage = frame.usage_metadata
        self._model = frame.model_version or self._model
        if not frame.candidates:
            self._ended = self._ended or frame.prompt_feedback is not None
            return ""
        self._candidate = True
        candidate = frame.candidates[0]
        text = []
        for part in candidate.content.parts:
            last = self._parts[-1] if self._parts else None
            if (part.text is not None and part.function_call is None and last is not None
                    and last.text is not None and last.function_call is None
                    and last.thought == part.thought and last.thought_signature is None):
                self._parts[-1] = msgspec.structs.replace(last, text=last.text + part.text,
                                                          thought_signature=part.thought_signature)
            else:
                self._parts.append(part)
            if part.text and not part.thought:
                text.append(part.text)
        if candidate.finish_reason is not None:
            self._finish, self._ended = candidate.finish_reason, True
        return "".join(text)

    def finish(self) -> ChatResponse:
        if not self._ended:
            raise stream_cut(NAME, "a frame with a finishReason")
        candidates = [_Candidate(content=_Content(parts=self._parts),
                                 finish_reason=self._finish)] if self._candidate else []
        return _chat_response(_Response(candidates=candidates, usage_metadata=self._usage,
                                        model_version=self._model))
