"""Simulated Amazon Bedrock Converse (`/model/{modelId}/converse` and `/converse-stream`).

Strict as the service: unknown fields refused (`Converse`'s members only), roles alternating,
every `toolUse` answered by a `toolResult` in the next message, image formats from Converse's
lowercase enum and matching the bytes, images inside a `toolResult` only for the families
Bedrock documents them for (Anthropic Claude, Amazon Nova) — any other family answers the
refusal Bedrock gives it. Errors are `{"message": …}` with their type in `x-amzn-ErrorType`;
a request is signed with Signature Version 4 or carries a Bedrock API key (`check_auth`). A
stream is AWS's event-stream framing, made by `fuseforks.wires.eventstream` (which the official
client reads in `tests/simulator/test_cloud_clients.py`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from fuseforks.simulator.brain import Answer, CallTools, Conversation, RefuseImages, Script, decide
from fuseforks.simulator.media import decode_image
from fuseforks.simulator.shapes import (
    JSON,
    Invalid,
    Reply,
    Streamed,
    convert,
    error_body,
    error_headers,
)
from fuseforks.wires import eventstream

WIRE = "bedrock-converse"

# Families whose tool results may hold images: Anthropic Claude and Amazon Nova (the Converse API
# reference, `ToolResultContentBlock.image`) and Llama 4 (observed, anomalyco/opencode#49443):
# model ids, with or without an inference profile's prefix.
TOOL_RESULT_IMAGE_FAMILIES = re.compile(r"(?:[a-z]+\.)?(?:anthropic\.|amazon\.nova|meta\.llama4)")
# A Bedrock model id: a provider and its model, an inference profile's geography before them.
_MODEL_ID = re.compile(r"(?:[a-z-]+\.)?(?:ai21|amazon|anthropic|cohere|deepseek|meta|mistral|"
                       r"openai|qwen|writer|google|moonshot|nvidia|minimax)\.")
TOOL_RESULT_IMAGE_REFUSED = ("This model doesn't support the image field for user messages. "
                             "Remove image and try again.")
FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
# Signature Version 4 as botocore writes it: the credential scope names the service `bedrock`.
_SIGV4 = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[A-Z0-9]{16,128})/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)"
    r"/bedrock/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=[0-9a-f]{64}")


def reply(status: int, message: str, kind: str | None = None) -> Reply:
    """An error as Bedrock sends it: the message in the body, the type in a header."""
    return Reply(status, error_body(WIRE, status, message), error_headers(WIRE, status, kind))


def check_auth(headers: dict[str, str], required: bool) -> Reply | None:
    """A Bedrock API key (`Bearer`), or a Signature Version 4 `Authorization` header of the
    right form with its `X-Amz-Date` of the scope's day: AWS's 403s otherwise."""
    value = headers.get("authorization", "")
    if not value:
        if not required:
            return None
        return reply(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
    if value.startswith("Bearer ") and value.removeprefix("Bearer ").strip():
        return None
    match = _SIGV4.fullmatch(value)
    if match is None:
        return reply(403, "Authorization header requires 'Credential', 'Signature' and "
                          "'SignedHeaders' parameters of the AWS4-HMAC-SHA256 algorithm, for the "
                          "service bedrock.", "IncompleteSignatureException")
    date = headers.get("x-amz-date", "")
    signed = match["signed"].split(";")
    if not date.startswith(match["date"]) or "host" not in signed or "x-amz-date" not in signed:
        return reply(403, "The request signature we calculated does not match the signature you "
                          "provided. Check your AWS Secret Access Key and signing method.",
                     "InvalidSignatureException")
    return None


class _Strict(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    pass


class Source(_Strict):
    bytes: str


class Image(_Strict):
    format: str
    source: Source


class ToolResultItem(_Strict):
    text: str | None = None
    image: Image | None = None
    json: Any = None


class ToolResult(_Strict):
    tool_use_id: str
    content: list[ToolResultItem]
    status: Literal["success", "error"] | None = None


class ToolUse(_Strict):
    tool_use_id: str
    name: str
    input: Any


class Block(_Strict):
    text: str | None = None
    image: Image | None = None
    tool_use: ToolUse | None = None
    tool_result: ToolResult | None = None


class Message(_Strict):
    role: Literal["user", "assistant"]
    content: list[Block]


class SystemBlock(_Strict):
    text: str


class InferenceConfig(_Strict):
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop_sequences: list[str] | None = None


class InputSchema(_Strict):
    json: dict[str, Any]


class ToolSpec(_Strict):
    name: str
    input_schema: InputSchema
    description: str | None = None


class Tool(_Strict):
    tool_spec: ToolSpec


class ToolConfig(_Strict):
    tools: list[Tool]
    tool_choice: dict[str, Any] | None = None


class Request(_Strict):
    messages: list[Message]
    system: list[SystemBlock] | None = None
    inference_config: InferenceConfig | None = None
    tool_config: ToolConfig | None = None
    additional_model_request_fields: dict[str, Any] | None = None


def _image(image: Image, where: str) -> bytes:
    if image.format not in FORMATS:
        raise Invalid(f"1 validation error detected: Value '{image.format}' at '{where}.image."
                      "format' failed to satisfy constraint: Member must satisfy enum value set: "
                      "[png, jpeg, gif, webp]")
    try:
        return decode_image(image.source.bytes, FORMATS[image.format], where)
    except Invalid:
        raise Invalid("The model returned the following errors: The provided image does not "
                      "match the specified image format.") from None


def _read(request: Request, model: str) -> Conversation:
    if not request.messages or request.messages[0].role != "user":
        raise Invalid("A conversation must start with a user message. Try again with a "
                      "conversation that starts with a user message.")
    rounds = 0
    seen: list[bytes] = []
    latest: list[bytes] = []
    open_calls: set[str] = set()
    previous = ""
    for n, message in enumerate(request.messages):
        where = f"messages.{n}.member.content"
        if message.role == previous:
            raise Invalid("A conversation must alternate between user and assistant roles. Make "
                          "sure the conversation alternates between user and assistant roles "
                          "and try again.")
        previous = message.role
        results = {b.tool_result.tool_use_id for b in message.content if b.tool_result}
        if results != open_calls:
            raise Invalid(f"The number of toolResult blocks at messages.{n}.content exceeds the "
                          "number of toolUse blocks of previous turn." if len(results) > len(
                              open_calls) else
                          "Expected toolResult blocks at messages."
                          f"{n}.content for the following Ids: "
                          f"{', '.join(sorted(open_calls - results))}")
        open_calls = set()
        if message.role == "assistant":
            latest = []
            open_calls = {b.tool_use.tool_use_id for b in message.content if b.tool_use}
            rounds += bool(open_calls)
            continue
        for m, block in enumerate(message.content):
            images = [block.image] if block.image else []
            if block.tool_result is not None:
                inner = [item.image for item in block.tool_result.content if item.image]
                if inner and _MODEL_ID.match(model) and not TOOL_RESULT_IMAGE_FAMILIES.match(model):
                    raise Invalid(TOOL_RESULT_IMAGE_REFUSED)
                images += inner
            for image in images:
                latest.append(_image(image, f"{where}.{m}.member"))
                seen.append(latest[-1])
            if block.text == "":
                raise Invalid(f"The text field in the ContentBlock object at {where}.{m} is "
                              "blank. Add text to the text field, and try again.")
    if open_calls:
        raise Invalid("Expected toolResult blocks at the last message for the following Ids: "
                      + ", ".join(sorted(open_calls)))
    tools = [t.tool_spec.name for t in request.tool_config.tools] if request.tool_config else []
    last = next((m for m in reversed(request.messages) if m.role == "assistant"), None)
    answering = last is not None and any(b.tool_use for b in last.content)
    return Conversation(model=model, tools=tools, tool_rounds_done=rounds,
                        answering_tool_round=answering, latest_images=latest, all_images=seen)


def handle(payload: object, seq: int, script: Script, model: str,
           stream: bool) -> Reply | Streamed:
    request = convert(payload, Request, "body")
    assert isinstance(request, Request)
    decision = decide(_read(request, model), script)
    if isinstance(decision, RefuseImages):
        raise Invalid(decision.message)
    content: list[dict[str, Any]]
    if isinstance(decision, CallTools):
        content = [{"toolUse": {"toolUseId": f"tooluse_sim{seq:04d}{i}", "name": name,
                                "input": decision.input()}}
                   for i, name in enumerate(decision.names)]
        stop = "tool_use"
    else:
        assert isinstance(decision, Answer)
        content, stop = [{"text": decision.text}], "end_turn"
    usage = {"inputTokens": 100 + seq, "outputTokens": 10, "totalTokens": 110 + seq}
    if stream:
        return _stream(content, stop, usage)
    return Reply(200, JSON.encode({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop, "usage": usage, "metrics": {"latencyMs": 42}}))


def _stream(content: list[dict[str, Any]], stop: str, usage: dict[str, int]) -> Streamed:
    """messageStart, per block contentBlockStart (a tool use's id and name), deltas,
    contentBlockStop; messageStop; metadata: what `converse_stream` yields."""
    from fuseforks.simulator.streams import json_pieces, text_pieces

    def frame(kind: str, body: dict[str, Any]) -> bytes:
        return eventstream.encode(eventstream.event(kind, JSON.encode(body)))

    frames = [frame("messageStart", {"role": "assistant"})]
    for index, block in enumerate(content):
        if "toolUse" in block:
            use = block["toolUse"]
            frames.append(frame("contentBlockStart", {"contentBlockIndex": index, "start": {
                "toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}))
            frames += [frame("contentBlockDelta", {"contentBlockIndex": index,
                                                   "delta": {"toolUse": {"input": piece}}})
                       for piece in json_pieces(JSON.encode(use["input"]).decode())]
        else:
            frames += [frame("contentBlockDelta", {"contentBlockIndex": index,
                                                   "delta": {"text": piece}})
                       for piece in text_pieces(block["text"])]
        frames.append(frame("contentBlockStop", {"contentBlockIndex": index}))
    frames.append(frame("messageStop", {"stopReason": stop}))
    frames.append(frame("metadata", {"usage": usage, "metrics": {"latencyMs": 42}}))
    return Streamed(frames, content_type=eventstream.CONTENT_TYPE)
