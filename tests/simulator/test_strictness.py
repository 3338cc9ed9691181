"""The simulator refuses what providers refuse, in each provider's own error shape."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest

from fuseforks.images.vault import ImageVault
from fuseforks.simulator import run_simulator
from fuseforks.wires import WIRES, Endpoint, get_wire
from tests.wires.helpers import MODEL_OF, snapshot_request, two_colour


def encoded(wire: str, base_url: str, key: str = "k") -> tuple[str, dict[str, str], dict[str, Any]]:
    vault = ImageVault()
    request = get_wire(wire).encode(snapshot_request(vault, model=MODEL_OF[wire]), vault,
                                    Endpoint(base_url, key))
    return request.url, request.headers, msgspec.json.decode(request.body)


async def post(url: str, headers: dict[str, str], body: object) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(url, headers=headers, content=msgspec.json.encode(body))


async def test_image_url_inside_a_tool_message_is_refused_like_geminis_compat_endpoint() -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded("openai-compat", sim.base_urls["openai-compat"])
        carrier = body["messages"].pop()  # move the carrier's image into the tool message
        body["messages"][-1]["content"] = [carrier["content"][1]]
        response = await post(url, headers, body)
    assert response.status_code == 400
    assert response.json() == {"error": {"message": "Invalid content part type: image_url",
                                         "type": "invalid_request_error", "param": None,
                                         "code": None}}


async def test_anthropic_refuses_a_media_type_that_disagrees_with_the_bytes() -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded("anthropic", sim.base_urls["anthropic"])
        body["messages"][-1]["content"][0]["content"][0]["source"]["media_type"] = "image/png"
        response = await post(url, headers, body)
    assert response.status_code == 400
    assert response.json() == {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "messages.2.content: Image does not match the provided media type image/png"}}


async def test_anthropic_refuses_a_tool_use_without_its_tool_result() -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded("anthropic", sim.base_urls["anthropic"])
        body["messages"].pop()
        response = await post(url, headers, body)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "messages: the final assistant tool_use blocks have no tool_result")


async def test_gemini_refuses_unknown_fields_such_as_display_name() -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded("gemini", sim.base_urls["gemini"])
        response_part = body["contents"][-1]["parts"][0]["functionResponse"]["parts"][0]
        response_part["inlineData"]["displayName"] = "photo.jpg"
        response = await post(url, headers, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert "unknown field `displayName`" in error["message"]


async def test_gemini_refuses_a_function_response_count_that_differs_from_the_calls() -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded("gemini", sim.base_urls["gemini"])
        body["contents"][-1]["parts"].append(body["contents"][-1]["parts"][0])
        response = await post(url, headers, body)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.")


@pytest.mark.parametrize("wire", ["openai-responses", "xai-responses"])
async def test_responses_refuse_an_output_without_its_call(wire: str) -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded(wire, sim.base_urls[wire])
        body["input"][-1]["call_id"] = "call_unknown"
        response = await post(url, headers, body)
    assert response.status_code == 400
    message = "No tool call found for function call output with call_id call_unknown."
    if wire == "xai-responses":
        assert response.json() == {"code": "Client specified an invalid argument", "error": message}
    else:
        assert response.json()["error"]["message"] == message


# AWS answers a request it cannot authenticate with a 403; a local server has no key to ask for.
UNAUTHENTICATED = {"bedrock-converse": 403}
LOCAL = ("ollama", "vllm", "llamacpp", "lmstudio")


@pytest.mark.parametrize("wire", [w for w in WIRES if w not in LOCAL])
async def test_a_request_without_a_key_is_401(wire: str) -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded(wire, sim.base_urls[wire], key="")
        response = await post(url, headers, body)
    assert response.status_code == UNAUTHENTICATED.get(wire, 401)


@pytest.mark.parametrize("wire", LOCAL)
async def test_a_local_server_takes_a_request_without_a_key_as_it_does(wire: str) -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded(wire, sim.base_urls[wire], key="")
        assert "authorization" not in headers
        assert (await post(url, headers, body)).status_code == 200


@pytest.mark.parametrize("wire", WIRES)
async def test_as_a_server_on_this_machine_it_takes_a_request_without_a_key(wire: str) -> None:
    """What `fuseforks simulator` does by default; a key that is sent must still be whole."""
    async with run_simulator(require_key=False) as sim:
        url, headers, body = encoded(wire, sim.base_urls[wire], key="")
        assert (await post(url, headers, body)).status_code == 200
        if wire not in ("anthropic", "gemini"):
            broken = headers | {"authorization": "Basic a2V5"}
            assert (await post(url, broken, body)).status_code == UNAUTHENTICATED.get(wire, 401)


@pytest.mark.parametrize("wire", WIRES)
async def test_unknown_top_level_field_is_refused(wire: str) -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded(wire, sim.base_urls[wire])
        body["reasoning_effort"] = "none"
        response = await post(url, headers, body)
    assert response.status_code == 400
    assert "reasoning_effort" in response.text


@pytest.mark.parametrize("wire", WIRES)
async def test_the_image_refusing_profile_refuses_images_on_every_wire(wire: str) -> None:
    async with run_simulator() as sim:
        vault = ImageVault()
        request = snapshot_request(vault, model="perplexity/deepseek-v4-pro-0813")
        http = get_wire(wire).encode(request, vault, Endpoint(sim.base_urls[wire], "k"))
        async with httpx.AsyncClient() as client:
            response = await client.post(http.url, headers=http.headers, content=http.body)
    assert response.status_code == 400
    assert "invalid request" in response.text


async def test_a_webp_declared_as_jpeg_is_refused() -> None:
    async with run_simulator() as sim:
        url, headers, body = encoded("openai-responses", sim.base_urls["openai-responses"])
        import base64
        webp = base64.b64encode(two_colour("WEBP")).decode()
        body["input"][-1]["output"][1]["image_url"] = f"data:image/jpeg;base64,{webp}"
        response = await post(url, headers, body)
    assert response.status_code == 400
    assert "Image does not match the provided media type image/jpeg" in response.text
