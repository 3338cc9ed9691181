"""The simulator's model profiles that refuse what real services refuse, with their real error
bodies, driven over loopback by the HTTP client: refused with the exact kind, and — where the
refusal is about where the images sit — accepted with the alternate placement, colours named."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import msgspec
import pytest

from fuseforks.core.canonical import ChatRequest
from fuseforks.core.errors import WireRejected
from fuseforks.core.names import Placement
from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import JpegResendNotice
from fuseforks.simulator import (
    FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES,
    MAX_TOKENS_REFUSING_PREFIXES,
    TOOL_OUTPUT_IMAGE_REFUSING_MODELS,
    run_simulator,
)
from fuseforks.wires import Endpoint, HttpRequest, get_wire
from fuseforks.wires.base import Wire
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import MODEL_OF, tool_round, two_colour, two_colour_jpeg

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01)
SEEN = "I see 1 image. image 1: left half green, right half magenta."
RESPONSES = ["openai-responses", "xai-responses", "meta-responses", "perplexity-responses"]
TOOL_IMAGES_REFUSED = "gpt-4.1-no-tool-images"

MAX_TOKENS_BODY = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
               "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}
PARTS_MESSAGE = ("Unable to submit request because `function_response.parts` is not supported for "
                 "this model. Learn more: "
                 "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling")
PARTS_BODY = [{"error": {"code": 400, "message": PARTS_MESSAGE, "errors": [
    {"message": PARTS_MESSAGE, "domain": "global", "reason": "badRequest"}],
    "status": "INVALID_ARGUMENT"}}]


def snapshot(vault: ImageVault, model: str, placement: Placement | None = None,
             image: bytes | None = None, media_type: str = "image/jpeg") -> ChatRequest:
    ref = vault.put(image or two_colour_jpeg(), media_type)
    request = tool_round([("camera_snapshot", '{"seq":1}', [ref])], model=model,
                         signature="c2lnLTE=")
    return msgspec.structs.replace(request, placement=placement)


def test_the_profiles_are_named_in_constants() -> None:
    assert FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES == ("gemini-1.", "gemini-2.")
    assert set(TOOL_OUTPUT_IMAGE_REFUSING_MODELS) == {TOOL_IMAGES_REFUSED}
    assert MAX_TOKENS_REFUSING_PREFIXES == ("o1", "o3", "o4", "gpt-5")


# --- Gemini before 3: no images inside functionResponse.parts -----------------------------------

@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.0-flash", "gemini-1.5-pro"])
async def test_gemini_before_3_refuses_function_response_parts_as_placement(model: str) -> None:
    async with run_simulator() as sim, ProviderClient(
            "gemini", Endpoint(sim.base_urls["gemini"], "k"), policy=FAST) as client:
        vault = ImageVault()
        with pytest.raises(WireRejected) as caught:
            await client.chat(snapshot(vault, model), vault)
    assert (caught.value.status, caught.value.refusal, caught.value.attempts) == (400, "placement", 1)
    assert caught.value.message == PARTS_MESSAGE
    assert [r.status for r in sim.received] == [400]


async def test_gemini_before_3_answers_the_real_list_wrapped_body() -> None:
    async with run_simulator() as sim:
        vault = ImageVault()
        http = get_wire("gemini").encode(snapshot(vault, "gemini-2.5-flash"), vault,
                                         Endpoint(sim.base_urls["gemini"], "k"))
        async with httpx.AsyncClient() as raw:
            response = await raw.post(http.url, headers=http.headers, content=http.body)
    assert (response.status_code, response.json()) == (400, PARTS_BODY)


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3.8-flash"])
async def test_gemini_sees_images_in_a_user_turn_after_the_results(model: str) -> None:
    async with run_simulator() as sim, ProviderClient(
            "gemini", Endpoint(sim.base_urls["gemini"], "k"), policy=FAST) as client:
        vault = ImageVault()
        response = await client.chat(snapshot(vault, model, "alternate"), vault)
    assert response.text == SEEN
    assert [r.status for r in sim.received] == [200]


async def test_gemini_3_takes_function_response_parts() -> None:
    async with run_simulator() as sim, ProviderClient(
            "gemini", Endpoint(sim.base_urls["gemini"], "k"), policy=FAST) as client:
        vault = ImageVault()
        response = await client.chat(snapshot(vault, "gemini-3.8-flash"), vault)
    assert response.text == SEEN


# --- A Responses model that takes no images in function_call_output -----------------------------

@pytest.mark.parametrize("wire", RESPONSES)
async def test_tool_output_images_refused_as_placement_then_seen_in_a_user_message(wire: str) -> None:
    async with run_simulator() as sim, ProviderClient(
            wire, Endpoint(sim.base_urls[wire], "k"), policy=FAST) as client:
        vault = ImageVault()
        with pytest.raises(WireRejected) as caught:
            await client.chat(snapshot(vault, TOOL_IMAGES_REFUSED), vault)
        accepted = await client.chat(snapshot(vault, TOOL_IMAGES_REFUSED, "alternate"), vault)
    assert (caught.value.status, caught.value.refusal) == (400, "placement")
    assert accepted.text == SEEN
    assert [r.status for r in sim.received] == [400, 200]


async def test_tool_output_images_refusal_points_at_the_input_item() -> None:
    async with run_simulator() as sim:
        vault = ImageVault()
        http = get_wire("openai-responses").encode(
            snapshot(vault, TOOL_IMAGES_REFUSED), vault, Endpoint(sim.base_urls["openai-responses"], "k"))
        async with httpx.AsyncClient() as raw:
            response = await raw.post(http.url, headers=http.headers, content=http.body)
    assert (response.status_code, response.json()) == (400, {"error": {
        "message": "Invalid type for 'input[2].output': expected a string, but got an array "
                   "instead.",
        "type": "invalid_request_error", "param": "input[2].output", "code": "invalid_type"}})


# --- An OpenAI reasoning model on chat completions: no max_tokens -------------------------------

def sending_max_tokens(wire: Wire) -> Wire:
    """The openai-compat wire as it was: `max_tokens` on every request, whatever the model."""
    def encode(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
        http = wire.encode(request, vault, endpoint)
        body: dict[str, Any] = msgspec.json.decode(http.body)
        body.pop("max_completion_tokens", None)
        body["max_tokens"] = request.max_tokens or 4096
        return HttpRequest(url=http.url, headers=http.headers, body=msgspec.json.encode(body))
    return dataclasses.replace(wire, encode=encode)


@pytest.mark.parametrize("model", ["o4-mini", "gpt-5", "gpt-5.5-mini"])
async def test_max_tokens_refused_as_a_parameter_and_the_images_not_blamed(model: str) -> None:
    fallbacks: list[JpegResendNotice] = []
    async with run_simulator() as sim:
        url = sim.base_urls["openai-compat"]
        old = ProviderClient(sending_max_tokens(get_wire("openai-compat")), Endpoint(url, "k"),
                             policy=FAST, on_jpeg_resend=fallbacks.append)
        async with old:
            vault = ImageVault()
            request = snapshot(vault, model, image=two_colour("WEBP"), media_type="image/webp")
            with pytest.raises(WireRejected) as caught:
                await old.chat(request, vault)
        refused = sim.received[-1].body
        async with ProviderClient("openai-compat", Endpoint(url, "k"), policy=FAST) as today:
            answer = await today.chat(msgspec.structs.replace(request, max_tokens=300), vault)
        sent = msgspec.json.decode(sim.received[-1].body)
    assert (caught.value.refusal, caught.value.images_rejected, caught.value.code) == (
        "parameter", False, "unsupported_parameter")
    assert fallbacks == []  # a parameter refusal is no reason to resend WebP as JPEG
    assert b'"max_tokens"' in refused
    assert answer.text == SEEN
    assert (sent["max_completion_tokens"], "max_tokens" in sent) == (300, False)
    assert [r.status for r in sim.received] == [400, 200]


async def test_max_tokens_refusal_is_the_real_body() -> None:
    async with run_simulator() as sim:
        vault = ImageVault()
        http = sending_max_tokens(get_wire("openai-compat")).encode(
            snapshot(vault, "o4-mini"), vault, Endpoint(sim.base_urls["openai-compat"], "k"))
        async with httpx.AsyncClient() as raw:
            response = await raw.post(http.url, headers=http.headers, content=http.body)
    assert (response.status_code, response.json()) == (400, MAX_TOKENS_BODY)


async def test_a_reasoning_model_is_refused_temperature() -> None:
    async with run_simulator() as sim:
        vault = ImageVault()
        request = msgspec.structs.replace(snapshot(vault, "o3"), temperature=0.2)
        http = get_wire("openai-compat").encode(request, vault,
                                                Endpoint(sim.base_urls["openai-compat"], "k"))
        body = msgspec.json.decode(http.body)
        body["temperature"] = 0.2  # what the wire no longer sends to this family
        async with httpx.AsyncClient() as raw:
            response = await raw.post(http.url, headers=http.headers,
                                      content=msgspec.json.encode(body))
        async with ProviderClient("openai-compat", Endpoint(sim.base_urls["openai-compat"], "k"),
                                  policy=FAST) as client:
            accepted = await client.chat(request, vault)
    assert (response.status_code, response.json()) == (400, {"error": {
        "message": "Unsupported parameter: 'temperature' is not supported with this model.",
        "type": "invalid_request_error", "param": "temperature",
        "code": "unsupported_parameter"}})
    assert accepted.text == SEEN


# --- Every wire: images in a user-role message after the results are seen -----------------------

@pytest.mark.parametrize("wire", ["anthropic", "openai-compat", "gemini", *RESPONSES])
async def test_every_wire_sees_alternately_placed_images(wire: str) -> None:
    async with run_simulator() as sim, ProviderClient(
            wire, Endpoint(sim.base_urls[wire], "k"), policy=FAST) as client:
        vault = ImageVault()
        response = await client.chat(snapshot(vault, MODEL_OF[wire], "alternate"), vault)
    assert response.text == SEEN
