"""Every encoded request validates against the official SDKs' own request types, strictly.

anthropic `MessageCreateParams`, openai `CompletionCreateParams` and Responses
`ResponseCreateParams` are TypedDicts: `strict_types.validate_strict` forbids unknown keys and
validates Iterables eagerly. google-genai's pydantic models (extra="forbid") check Gemini's
contents, plus our own check that each inline image has `mimeType`, `data` (the exact bytes) and
sits under a named `functionResponse`, with no `displayName` and no `$ref`.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pydantic
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from fuseforks.core.names import Placement
from fuseforks.images.vault import ImageVault
from fuseforks.wires import WIRES, Endpoint, get_wire
from tests.wires.helpers import TOOLS, caption, form, two_colour, two_colour_jpeg
from tests.wires.strict_types import validate_strict

ENDPOINT = Endpoint(base_url="https://example.test/v1", api_key="k")
SDK_TYPE = {"anthropic": MessageCreateParamsNonStreaming,
            "openai-compat": CompletionCreateParamsNonStreaming}


def rich_request(vault: ImageVault) -> tuple[ChatRequest, dict[str, bytes]]:
    """Two rounds: a parallel call with images (JPEG and WebP), an error result, a text answer."""
    jpeg, webp = two_colour_jpeg(), two_colour("WEBP")
    a, b = vault.put(jpeg, "image/jpeg"), vault.put(webp, "image/webp")
    messages = [
        SystemMessage(text="Answer briefly."),
        UserMessage(text="Check the camera twice."),
        AssistantMessage(text="Taking photos.", tool_calls=[
            ToolCall(id="call_a", name="camera_snapshot", arguments={"zoom": 2}, signature="c2lnLWE="),
            ToolCall(id="call_b", name="camera_status"),
        ]),
        ToolResultMessage(tool_call_id="call_a", name="camera_snapshot", text='{"seq":1}',
                          images=[a, b], caption=caption("camera_snapshot", 2)),
        ToolResultMessage(tool_call_id="call_b", name="camera_status", text="ready"),
        AssistantMessage(text="", tool_calls=[ToolCall(id="call_c", name="camera_snapshot")]),
        ToolResultMessage(tool_call_id="call_c", name="camera_snapshot",
                          text="Tool returned an error: busy", is_error=True),
        AssistantMessage(text="The camera is busy."),
        UserMessage(text="Thanks."),
    ]
    request = ChatRequest(model="model-x", messages=messages, tools=TOOLS, system="Be kind.",
                          max_tokens=300, temperature=0.2)
    return request, {a.digest: jpeg, b.digest: webp}


def body_of(wire: str, placement: Placement | None = None,
            model: str = "model-x") -> tuple[dict[str, Any], dict[str, bytes]]:
    vault = ImageVault()
    request, images = rich_request(vault)
    request = msgspec.structs.replace(request, placement=placement, model=model)
    return msgspec.json.decode(get_wire(wire).encode(request, vault, ENDPOINT).body), images


@pytest.mark.parametrize("placement", [None, "alternate"])
@pytest.mark.parametrize("wire", [w for w in WIRES if form(w) not in ("gemini", "bedrock-converse")])
def test_request_validates_strictly_against_the_official_sdk_type(
    wire: str, placement: Placement | None
) -> None:
    """Bedrock's body is validated against botocore's service model (`test_bedrock.py`)."""
    body, _ = body_of(wire, placement)
    if wire == "vertex-anthropic":  # the Messages body, its model in the URL instead
        assert body.pop("anthropic_version") == "vertex-2023-10-16"
        body = {"model": "model-x", **body}
    validate_strict(SDK_TYPE.get(form(wire), ResponseCreateParamsNonStreaming), body)


@pytest.mark.parametrize("placement", [None, "alternate"])
@pytest.mark.parametrize("wire", ["openai-compat", "openai-responses"])
def test_a_reasoning_model_request_validates_strictly(wire: str, placement: Placement | None) -> None:
    body, _ = body_of(wire, placement, model="o4-mini")
    assert "temperature" not in body
    validate_strict(SDK_TYPE.get(wire, ResponseCreateParamsNonStreaming), body)


def validate_gemini(body: dict[str, Any]) -> None:
    assert set(body) <= GEMINI_TOP_LEVEL
    for content in body["contents"]:
        genai.Content.model_validate_json(msgspec.json.encode(content))
    genai.Content.model_validate_json(msgspec.json.encode(body["systemInstruction"]))
    for tool in body["tools"]:
        genai.Tool.model_validate_json(msgspec.json.encode(tool))
    genai.GenerationConfig.model_validate_json(msgspec.json.encode(body["generationConfig"]))


def test_gemini_alternate_request_validates_and_carries_exact_images_in_a_user_turn() -> None:
    body, images = body_of("gemini", "alternate")
    validate_gemini(body)
    responses = [p["functionResponse"] for c in body["contents"] for p in c["parts"]
                 if "functionResponse" in p]
    assert [("parts" in r) for r in responses] == [False, False, False]
    carrier = body["contents"][3]
    assert carrier["role"] == "user"
    assert [next(iter(p)) for p in carrier["parts"]] == ["text", "inlineData", "inlineData"]
    assert carrier["parts"][0]["text"] == caption("camera_snapshot", 2)
    assert [(p["inlineData"]["mimeType"], base64.b64decode(p["inlineData"]["data"]))
            for p in carrier["parts"][1:]] == [
        ("image/jpeg", images_by_type(images, "jpeg")), ("image/webp", images_by_type(images, "webp"))]


GEMINI_TOP_LEVEL = {"contents", "systemInstruction", "tools", "generationConfig"}


def test_gemini_request_validates_against_google_genai_models_and_carries_exact_images() -> None:
    body, images = body_of("gemini")
    validate_gemini(body)
    responses = [p["functionResponse"] for c in body["contents"] for p in c["parts"]
                 if "functionResponse" in p]
    assert [r["name"] for r in responses] == ["camera_snapshot", "camera_status", "camera_snapshot"]
    inline = [part["inlineData"] for r in responses for part in r.get("parts", [])]
    assert [set(i) for i in inline] == [{"mimeType", "data"}, {"mimeType", "data"}]
    assert [(i["mimeType"], base64.b64decode(i["data"], validate=True)) for i in inline] == [
        ("image/jpeg", images_by_type(images, "jpeg")), ("image/webp", images_by_type(images, "webp"))]
    assert b"$ref" not in msgspec.json.encode(responses)
    assert b"displayName" not in msgspec.json.encode(responses)


def images_by_type(images: dict[str, bytes], kind: str) -> bytes:
    marker = {"jpeg": b"\xff\xd8", "webp": b"RIFF"}[kind]
    (data,) = [d for d in images.values() if d.startswith(marker)]
    return data


def test_the_strict_check_rejects_an_unknown_key_deep_inside_an_iterable() -> None:
    body, _ = body_of("anthropic")
    body["messages"][2]["content"][0]["content"][0]["source"]["bogus_field"] = "high"
    with pytest.raises(pydantic.ValidationError):
        validate_strict(MessageCreateParamsNonStreaming, body)


def test_the_strict_check_rejects_a_wrong_type_deep_inside_an_iterable() -> None:
    body, _ = body_of("openai-responses")
    body["input"][4]["output"][1]["image_url"] = 7
    with pytest.raises(pydantic.ValidationError):
        validate_strict(ResponseCreateParamsNonStreaming, body)


def test_the_strict_check_rejects_a_tool_message_with_image_parts() -> None:
    body, _ = body_of("openai-compat")
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    tool["content"] = [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AA=="}}]
    with pytest.raises(pydantic.ValidationError):
        validate_strict(CompletionCreateParamsNonStreaming, body)


def test_gemini_models_reject_a_display_name_we_never_send() -> None:
    body, _ = body_of("gemini")
    content = next(c for c in body["contents"] if any("functionResponse" in p for p in c["parts"]))
    content["parts"][0]["functionResponse"]["parts"][0]["inlineData"]["bogus"] = "x"
    with pytest.raises(pydantic.ValidationError):
        genai.Content.model_validate_json(msgspec.json.encode(content))
