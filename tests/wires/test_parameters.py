"""Which token parameter each wire and model family takes, and what a family refuses: data on
`Wire.parameters`, read by the encoders."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from fuseforks.core.canonical import ChatRequest, UserMessage
from fuseforks.images.vault import ImageVault
from fuseforks.wires import WIRES, Endpoint, get_wire
from fuseforks.wires.parameters import OPENAI_REASONING
from tests.wires.helpers import form
from tests.wires.test_openapi_shapes import validator
from tests.wires.test_sdk_shapes import rich_request

ENDPOINT = Endpoint(base_url="https://example.test/v1", api_key="k")
TOKEN_KEYS = {"max_tokens", "max_completion_tokens", "max_output_tokens", "generationConfig",
              "temperature"}


def body(wire: str, model: str, *, max_tokens: int | None = None,
         temperature: float | None = None) -> dict[str, Any]:
    request = ChatRequest(model=model, messages=[UserMessage(text="hi")], max_tokens=max_tokens,
                          temperature=temperature)
    return msgspec.json.decode(get_wire(wire).encode(request, ImageVault(), ENDPOINT).body)


def sent(wire: str, model: str, **kw: Any) -> dict[str, Any]:
    return {k: v for k, v in body(wire, model, **kw).items() if k in TOKEN_KEYS}


RESPONSES = [w for w in WIRES if w.endswith("-responses")]


@pytest.mark.parametrize(("wire", "model", "unset", "set_to_300"), [
    ("anthropic", "claude-sonnet-5-5", {"max_tokens": 4096}, {"max_tokens": 300}),
    ("openai-compat", "gpt-4.1", {}, {"max_tokens": 300}),
    ("openai-compat", "gemini-3.5-flash-lite", {}, {"max_tokens": 300}),
    ("openai-compat", "o4-mini", {}, {"max_completion_tokens": 300}),
    ("openai-compat", "o3", {}, {"max_completion_tokens": 300}),
    ("openai-compat", "o1-mini", {}, {"max_completion_tokens": 300}),
    ("openai-compat", "gpt-5", {}, {"max_completion_tokens": 300}),
    ("openai-compat", "gpt-5.5-mini", {}, {"max_completion_tokens": 300}),
    ("openai-compat", "gpt-4o", {}, {"max_tokens": 300}),
    ("openai-compat", "omni-moderation-latest", {}, {"max_tokens": 300}),
    ("gemini", "gemini-3.8-flash", {}, {"generationConfig": {"maxOutputTokens": 300}}),
    *[(w, "gpt-5.5", {}, {"max_output_tokens": 300}) for w in RESPONSES],
])
def test_the_token_parameter_each_wire_and_family_sends(
    wire: str, model: str, unset: dict[str, Any], set_to_300: dict[str, Any]
) -> None:
    assert sent(wire, model) == unset
    assert sent(wire, model, max_tokens=300) == set_to_300


@pytest.mark.parametrize(("wire", "model", "expected"), [
    ("anthropic", "claude-sonnet-5-5", {"max_tokens": 4096}),  # the Messages API takes none
    ("openai-compat", "gpt-4.1", {"temperature": 0.2}),
    ("openai-compat", "o4-mini", {}),
    ("openai-compat", "gpt-5", {}),
    ("gemini", "gemini-3.8-flash", {"generationConfig": {"temperature": 0.2}}),
    ("openai-responses", "gpt-4.1", {"temperature": 0.2}),
    ("openai-responses", "o3", {}),
    ("xai-responses", "grok-4.7", {"temperature": 0.2}),
])
def test_a_family_that_refuses_temperature_is_not_sent_it(
    wire: str, model: str, expected: dict[str, Any]
) -> None:
    assert sent(wire, model, temperature=0.2) == expected


def test_the_reasoning_family_pattern_is_documented_data() -> None:
    assert OPENAI_REASONING.pattern == r"(?:o\d|gpt-5)"
    matches = [m for m in ("o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5.5-pro", "gpt-4.1", "gpt-4o",
                           "omni-moderation", "openai/gpt-5") if OPENAI_REASONING.match(m)]
    assert matches == ["o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5.5-pro"]


@pytest.mark.parametrize("wire", WIRES)
def test_each_wire_shows_its_rules_as_data(wire: str) -> None:
    rules = get_wire(wire).parameters
    expected = {"anthropic": ("max_tokens", 4096), "openai-compat": ("max_tokens", None),
                "gemini": ("maxOutputTokens", None), "bedrock-converse": ("maxTokens", None),
                }.get(form(wire), ("max_output_tokens", None))
    default = rules.for_model("some-model")
    assert (default.max_tokens, default.default_max_tokens) == expected


def test_a_reasoning_model_request_passes_openais_openapi_document() -> None:
    vault = ImageVault()
    request, _ = rich_request(vault)
    request = msgspec.structs.replace(request, model="o4-mini")
    encoded = msgspec.json.decode(get_wire("openai-compat").encode(request, vault, ENDPOINT).body)
    assert (encoded.get("max_completion_tokens"), "max_tokens" in encoded,
            "temperature" in encoded) == (300, False, False)
    assert [e.message for e in validator("CreateChatCompletionRequest").iter_errors(encoded)] == []
    responses = msgspec.json.decode(
        get_wire("openai-responses").encode(request, vault, ENDPOINT).body)
    assert (responses.get("max_output_tokens"), "temperature" in responses) == (300, False)
    assert [e.message for e in validator("CreateResponse").iter_errors(responses)] == []
