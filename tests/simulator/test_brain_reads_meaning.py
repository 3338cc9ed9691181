"""The scripted model reads the conversation's meaning: the latest tool round and the images sent
after it, wherever they sit — not only a request that ends with the tool result."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from fuseforks.simulator import run_simulator
from tests.simulator.test_sdk_clients import HELLO, SEEN, b64, red_green

CALL = {"type": "function_call", "call_id": "call_1", "name": "camera_snapshot", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "snapshot taken"}
QUESTION = {"role": "user", "content": "What does the camera see?"}
IMAGE = {"role": "user", "content": [
    {"type": "input_image", "image_url": f"data:image/png;base64,{b64(red_green())}",
     "detail": "auto"}]}
SYSTEM = {"role": "system", "content": "Answer briefly."}
REPLY = {"role": "assistant", "content": [{"type": "output_text", "text": "A red-green card."}]}
THANKS = {"role": "user", "content": "Thanks."}


async def respond(items: list[Any]) -> str:
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['openai-responses']}/responses", headers={"authorization": "Bearer k"},
            json={"model": "gpt-sim", "input": items, "tools": [
                {"type": "function", "name": "camera_snapshot", "parameters": {}}]})
    assert response.status_code == 200, response.text
    return str(response.json()["output"][0]["content"][0]["text"])


@pytest.mark.parametrize("items", [
    [QUESTION, CALL, OUTPUT, IMAGE],
    [QUESTION, CALL, OUTPUT, IMAGE, SYSTEM],
    [QUESTION, CALL, OUTPUT, SYSTEM, IMAGE],
    [QUESTION, CALL, OUTPUT, THANKS, IMAGE],
], ids=["image-after", "trailing-system", "system-between", "text-between"])
async def test_images_after_the_tool_round_are_seen_wherever_they_sit(items: list[Any]) -> None:
    assert await respond(items) == SEEN


async def test_a_tool_round_without_images_is_answered_as_such() -> None:
    assert await respond([QUESTION, CALL, OUTPUT, SYSTEM]) == (
        "I received the tool result; it has no image.")


async def test_after_the_model_answered_the_round_is_over() -> None:
    assert await respond([QUESTION, CALL, OUTPUT, IMAGE, REPLY, THANKS]) == HELLO


async def test_gemini_sees_the_image_in_a_user_turn_after_a_text_turn() -> None:
    body = {"contents": [
        {"role": "user", "parts": [{"text": "What does it see?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "camera_snapshot"},
                                     "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "camera_snapshot",
                                                         "response": {"output": "taken"}}}]},
        {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png",
                                                   "data": b64(red_green())}}]},
        {"role": "user", "parts": [{"text": "Name the colours."}]},
    ], "tools": [{"functionDeclarations": [{"name": "camera_snapshot"}]}]}
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(f"{sim.base_urls['gemini']}/models/gemini-3-sim:generateContent",
                                   headers={"x-goog-api-key": "k"}, json=body)
    assert response.status_code == 200, response.text
    assert response.json()["candidates"][0]["content"]["parts"] == [{"text": SEEN}]


async def test_an_image_in_a_message_must_say_its_detail() -> None:
    """The SDK's `ResponseInputImageParam` requires `detail` in a message (a tool output's image
    type does not): the strict simulator refuses a message image without it."""
    bare = {"role": "user", "content": [
        {"type": "input_image", "image_url": f"data:image/png;base64,{b64(red_green())}"}]}
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['openai-responses']}/responses", headers={"authorization": "Bearer k"},
            json={"model": "gpt-sim", "input": [QUESTION, CALL, OUTPUT, bare]})
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert message.startswith("Invalid request (input[3]): ")  # our frame; the rest is the decoder's
    assert "detail" in message
