"""What a refusal is about, read off real provider error bodies.

Every body in `fixtures/errors/` is one a real service answered (the source of each is named in
the table). The kind decides what the engine does next: `image` strips the images, `placement`
moves them to a user-role message after the tool results, `parameter` never blames the images,
`other` is a refusal that names nothing more specific.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from fuseforks.core.errors import WireRejected, WireRetryable
from fuseforks.wires import get_wire

FIXTURES = Path(__file__).parent / "fixtures" / "errors"

# fixture → (wire that answered it, status, refusal kind; None: retryable). Sources:
CASES: dict[str, tuple[str, int, str | None]] = {
    # OpenAI, a reasoning model sent `max_tokens` (the bug this table was started for)
    "openai-max-tokens-unsupported": ("openai-compat", 400, "parameter"),
    # Gemini 2.5 over Vertex/AI Studio: images in functionResponse.parts (list-wrapped)
    "gemini-function-response-parts-unsupported": ("gemini", 400, "placement"),
    # OpenAI chat: image_url inside a role:"tool" message (OpenHands/OpenHands#7700)
    "openai-image-url-in-tool-message": ("openai-compat", 400, "placement"),
    # anthropics/claude-code#8647
    "anthropic-could-not-process-image": ("anthropic", 400, "image"),
    # anthropics/claude-code#6300: a field path first, yet about the image
    "anthropic-image-media-type-mismatch": ("anthropic", 400, "image"),
    # vybestack/llxprt-code#2130: the field path points into a tool result's image
    "anthropic-tool-result-image-media-type-differs": ("anthropic", 400, "image"),
    # anthropics/claude-code#24451
    "anthropic-max-tokens-above-model-limit": ("anthropic", 400, "parameter"),
    # ProfSynapse/nexus#17 (the message ends with a URL)
    "anthropic-max-tokens-below-thinking-budget": ("anthropic", 400, "parameter"),
    # anthropics/claude-code#35792
    "anthropic-overloaded": ("anthropic", 529, None),
    # openai/codex#4946: code invalid_value, param "input" — the message names the image
    "openai-responses-image-data-not-valid": ("openai-responses", 400, "image"),
    # CosmosShadow/gptpdf#6
    "openai-unsupported-image": ("openai-compat", 400, "image"),
    # appatalks/eva-agent#83 (o3-mini)
    "openai-temperature-unsupported": ("openai-compat", 400, "parameter"),
    # nashsu/llm_wiki#670
    "openai-temperature-unsupported-value": ("openai-compat", 400, "parameter"),
    # OpenHands/software-agent-sdk#1837 (gpt-5.2): no code, the param names it
    "openai-temperature-param-without-code": ("openai-compat", 400, "parameter"),
    # openai/openai-agents-python#458
    "openai-model-not-found": ("openai-responses", 404, "parameter"),
    # anthropics/claude-code#5349: the field path first names the model
    "anthropic-model-not-found": ("anthropic", 404, "parameter"),
    # google-gemini/gemini-api-quickstart#20
    "gemini-model-not-found": ("gemini", 404, "parameter"),
    # xAI's docs, Advanced API Usage, Regional Endpoints (docs.x.ai)
    "xai-model-not-found": ("xai-responses", 404, "parameter"),
    # perplexityai/api-discussion#262: a 400 that must not blame the images
    "perplexity-invalid-model": ("perplexity-responses", 400, "parameter"),
    # ChatGPTNextWeb/NextChat#2358: param "messages", but too long is not a parameter's fault
    "openai-context-length-exceeded": ("openai-compat", 400, "other"),
    # google-gemini/gemini-cli#27244 (list-wrapped)
    "gemini-provided-image-not-valid": ("gemini", 400, "image"),
    # google-gemini/gemini-cli#15912 (list-wrapped): names nothing
    "gemini-invalid-argument": ("gemini", 400, "other"),
    # google-gemini/gemini-cli#5191
    "gemini-overloaded": ("gemini", 503, None),
    # egoist/chatwise-releases#799: Gemini behind an OpenAI-compatible gateway, URL in the text
    "gemini-compat-unable-to-process-input-image": ("openai-compat", 400, "image"),
    # ggml-org/llama.cpp#23380: a Responses server refusing input_image in function_call_output
    "llamacpp-responses-tool-output-must-be-text": ("openai-responses", 400, "placement"),
    # compl-ai/compl-ai#20: Azure's content filter stopped the prompt (`param` "prompt"): not a
    # parameter's fault, and perhaps what the images show
    "azure-content-filter-prompt": ("azure-chat", 400, "other"),
    # Azure's answer for a deployment that does not exist (the model is a deployment there)
    "azure-deployment-not-found": ("azure-responses", 404, "parameter"),
    # Azure OpenAI's image size refusal (20 MB), as Portkey's error library quotes it
    "azure-image-size": ("azure-chat", 400, "image"),
    # iOfficeAI/AionCore#377: Bedrock's unknown model, a 400 (the type from x-amzn-ErrorType)
    "bedrock-model-identifier-invalid": ("bedrock-converse", 400, "parameter"),
    # anomalyco/opencode#49443: an image in a toolResult for a family other than Claude and Nova
    "bedrock-tool-result-image-field": ("bedrock-converse", 400, "placement"),
    # boto/boto3#4415
    "bedrock-image-format-mismatch": ("bedrock-converse", 400, "image"),
    # Bedrock's throttling (the Converse API reference's ThrottlingException)
    "bedrock-throttling": ("bedrock-converse", 429, None),
    # anthropics/claude-code#12429: Claude on Vertex names a header it does not take
    "vertex-anthropic-beta-header": ("vertex-anthropic", 400, "other"),
    # decolua/9router#1081: Gemini on Vertex refusing a tool schema
    "vertex-gemini-invalid-schema-value": ("vertex-gemini", 400, "parameter"),
    # vllm-project/vllm#43203: vLLM takes no image in a role:"tool" message
    "vllm-tool-message-text-only": ("vllm", 400, "placement"),
    # vllm-project/vllm#11629: the body a text-only model should answer an image with
    "vllm-image-url-not-supported-by-model": ("vllm", 400, "image"),
}


def test_every_fixture_is_in_the_table() -> None:
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_error_body_is_classified(name: str) -> None:
    wire, status, kind = CASES[name]
    error = get_wire(wire).classify(status, (FIXTURES / f"{name}.json").read_bytes())
    if kind is None:
        assert isinstance(error, WireRetryable)
        return
    assert isinstance(error, WireRejected)
    assert (error.refusal, error.images_rejected) == (kind, kind in ("image", "placement"))


def test_the_max_tokens_body_keeps_its_fields() -> None:
    error = get_wire("openai-compat").classify(
        400, (FIXTURES / "openai-max-tokens-unsupported.json").read_bytes())
    assert isinstance(error, WireRejected)
    assert (error.error_type, error.code, error.refusal) == (
        "invalid_request_error", "unsupported_parameter", "parameter")
    assert error.message.startswith("Unsupported parameter: 'max_tokens'")


def test_the_list_wrapped_gemini_body_keeps_its_fields() -> None:
    error = get_wire("gemini").classify(
        400, (FIXTURES / "gemini-function-response-parts-unsupported.json").read_bytes())
    assert isinstance(error, WireRejected)
    assert (error.error_type, error.code, error.refusal) == (
        "INVALID_ARGUMENT", "INVALID_ARGUMENT", "placement")


J = msgspec.json.encode


@pytest.mark.parametrize("message", [
    "Request contains an invalid argument. Learn more: "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/overview",
    "Bad request, see https://example.test/image/vision/picture-errors.html",
    "See data:image/png;base64,iVBORw0KGgo= for details",
])
def test_a_url_in_the_message_never_names_the_images(message: str) -> None:
    body = J({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
    error = get_wire("gemini").classify(400, body)
    assert isinstance(error, WireRejected)
    assert (error.refusal, error.images_rejected) == ("other", False)


@pytest.mark.parametrize(("message", "kind"), [
    ("Could not process image (see https://docs.example.test/errors)", "image"),
    ("Invalid image data: data:text/plain,x", "image"),
    ("max_tokens: 9000 > 8192, see https://docs.example.test/image-models", "parameter"),
])
def test_words_outside_a_url_still_count(message: str, kind: str) -> None:
    body = J({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
    error = get_wire("anthropic").classify(400, body)
    assert isinstance(error, WireRejected) and error.refusal == kind


@pytest.mark.parametrize(("status", "kind"), [
    (400, "image"), (413, "image"), (422, "image"), (401, "other"), (403, "other"), (409, "other"),
])
def test_only_400_413_and_422_can_name_the_images(status: int, kind: str) -> None:
    body = J({"type": "error", "error": {"type": "invalid_request_error",
                                         "message": "Could not process image"}})
    error = get_wire("anthropic").classify(status, body)
    assert isinstance(error, WireRejected) and error.refusal == kind


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 529])
def test_408_429_and_5xx_stay_retryable(status: int) -> None:
    body = J({"type": "error", "error": {"type": "api_error", "message": "Could not process image"}})
    assert isinstance(get_wire("anthropic").classify(status, body), WireRetryable)


def rejected(**fields: Any) -> WireRejected:
    return WireRejected(wire="anthropic", status=400, error_class="client_error", **fields)


def test_wire_rejected_defaults_to_other_and_images_rejected_means_image() -> None:
    assert rejected().refusal == "other"
    assert rejected(images_rejected=True).refusal == "image"
    assert rejected(images_rejected=False).refusal == "other"
    assert (rejected(refusal="placement").refusal, rejected(refusal="placement").images_rejected) \
        == ("placement", True)
    assert rejected(refusal="image", images_rejected=True).refusal == "image"
    assert rejected(refusal="parameter").images_rejected is False


def test_images_rejected_is_read_only_and_cannot_contradict_the_refusal() -> None:
    error = rejected(refusal="parameter")
    with pytest.raises(AttributeError):
        error.images_rejected = True  # type: ignore[misc]
    with pytest.raises(ValueError, match="images_rejected"):
        rejected(refusal="parameter", images_rejected=True)


@pytest.mark.parametrize(("message", "kind"), [
    ("messages.1.content.0.image.source.base64: invalid base64 data", "image"),
    ("messages.4.content.0.tool_result.content.2.image.source.data: bad", "image"),
    ("`messages.2.content.1.image`: unexpected", "image"),
    ("max_tokens: 128001 > 64000, which is the maximum", "parameter"),
    ("messages.1.content.0.text: text content blocks must be non-empty", "parameter"),
])
def test_a_leading_field_path_into_an_image_is_about_the_image(message: str, kind: str) -> None:
    body = msgspec.json.encode({"type": "error", "error": {
        "type": "invalid_request_error", "message": message}})
    error = get_wire("anthropic").classify(400, body)
    assert isinstance(error, WireRejected)
    assert error.refusal == kind
