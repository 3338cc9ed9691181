"""The official SDK clients, pointed at the simulator, drive a tool round with an image and back.

The SDK request types are the reference for what the simulator must accept; what the real
services refuse is still refused, in each provider's own error shape.
"""

from __future__ import annotations

import base64
import io
import typing
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes
from openai.types.responses import response_create_params
from PIL import Image

from fuseforks.simulator import run_simulator
from fuseforks.simulator.responses import RESPONSE_CREATE_FIELDS

RED, GREEN = (255, 0, 0), (0, 200, 0)
SEEN = "I see 1 image. image 1: left half red, right half green."
HELLO = "Hello from the fuseforks simulator."


def red_green(fmt: str = "PNG") -> bytes:
    image = Image.new("RGB", (64, 32), RED)
    image.paste(GREEN, (32, 0, 64, 32))
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


SCHEMA = {"type": "object", "properties": {"width_px": {"type": "integer"}}}


# --- Anthropic ---------------------------------------------------------------------------------

ANTHROPIC_TOOLS: list[Any] = [{"type": "custom", "name": "camera_snapshot",
                               "description": "Take a photo.", "input_schema": SCHEMA}]


async def _anthropic_round(client: anthropic.AsyncAnthropic, *, trailing_user_image: bool) -> str:
    question = {"role": "user", "content": "What does the camera see?"}
    first = await client.messages.create(model="claude-sim", max_tokens=256,
                                         messages=[question], tools=ANTHROPIC_TOOLS)
    assert first.stop_reason == "tool_use"
    call = first.content[0]
    assert call.type == "tool_use"
    assert call.name == "camera_snapshot"
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                          "data": b64(red_green())}}
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id,
                              "content": "snapshot taken" if trailing_user_image else [image]}
    turn: list[Any] = [result]
    if trailing_user_image:
        turn.append(image)  # the image after the tool result, in the same user turn
    second = await client.messages.create(
        model="claude-sim", max_tokens=256, tools=ANTHROPIC_TOOLS,
        messages=[question, {"role": "assistant", "content": first.content},
                  {"role": "user", "content": turn}])
    assert second.stop_reason == "end_turn"
    block = second.content[0]
    assert block.type == "text"
    return block.text


async def test_anthropic_sdk_with_an_api_key_does_a_tool_round_with_an_image() -> None:
    async with run_simulator(any_model=True) as sim:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=sim.base_urls["anthropic"],
                                          max_retries=0)
        async with client:
            assert await _anthropic_round(client, trailing_user_image=False) == SEEN


async def test_anthropic_sdk_with_a_bearer_token_is_accepted() -> None:
    async with run_simulator(any_model=True) as sim:
        client = anthropic.AsyncAnthropic(auth_token="k", base_url=sim.base_urls["anthropic"],
                                          max_retries=0)
        async with client:
            assert await _anthropic_round(client, trailing_user_image=True) == SEEN


async def test_anthropic_without_a_key_is_refused_in_anthropics_shape() -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['anthropic']}/v1/messages",
            headers={"anthropic-version": "2023-06-01", "authorization": "Basic k"},
            json={"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 401
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "authentication_error"


async def test_anthropic_refuses_an_unknown_tool_type() -> None:
    async with run_simulator(any_model=True) as sim:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=sim.base_urls["anthropic"],
                                          max_retries=0)
        async with client:
            with pytest.raises(anthropic.BadRequestError) as refused:
                await client.messages.create(
                    model="claude-sim", max_tokens=64,
                    messages=[{"role": "user", "content": "hi"}],
                    tools=[{**ANTHROPIC_TOOLS[0], "type": "gadget"}])
    body = refused.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"


# --- OpenAI Chat Completions ---------------------------------------------------------------------

CHAT_TOOLS: list[Any] = [{"type": "function", "function": {
    "name": "camera_snapshot", "description": "Take a photo.", "parameters": SCHEMA}}]


@pytest.mark.parametrize("trailing_system", [False, True])
async def test_openai_chat_sdk_does_a_tool_round_with_the_image_after_the_tool_message(
    trailing_system: bool,
) -> None:
    async with (
        run_simulator(any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-compat"], max_retries=0) as client,
    ):
        question: Any = {"role": "user", "content": "What does the camera see?"}
        first = await client.chat.completions.create(model="gpt-sim", messages=[question],
                                                     tools=CHAT_TOOLS)
        assert first.choices[0].finish_reason == "tool_calls"
        calls = first.choices[0].message.tool_calls
        assert calls is not None
        call = calls[0]
        assert call.type == "function"
        assert call.function.name == "camera_snapshot"
        messages: list[Any] = [
            question, first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "snapshot taken"},
            {"role": "user", "content": [
                {"type": "text", "text": "The snapshot:"},
                {"type": "image_url",
                 "image_url": {"url": f"data:image/png;base64,{b64(red_green())}"}}]},
        ]
        if trailing_system:
            messages.append({"role": "system", "content": "Answer briefly."})
        second = await client.chat.completions.create(model="gpt-sim", messages=messages,
                                                      tools=CHAT_TOOLS)
    assert second.choices[0].message.content == SEEN


async def test_openai_refuses_an_image_url_in_a_tool_message_with_openais_body() -> None:
    async with (
        run_simulator() as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-compat"], max_retries=0) as client,
    ):
        question: Any = {"role": "user", "content": "What does the camera see?"}
        first = await client.chat.completions.create(model="gpt-4.1", messages=[question],
                                                     tools=CHAT_TOOLS)
        calls = first.choices[0].message.tool_calls
        assert calls is not None
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model="gpt-4.1", tools=CHAT_TOOLS, messages=[
                question, first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": calls[0].id, "content": [  # type: ignore[list-item]
                    {"type": "image_url",
                     "image_url": {"url": f"data:image/png;base64,{b64(red_green())}"}}]}])
    assert refused.value.response.json() == {"error": {
        "message": "Invalid 'messages[2]'. Image URLs are only allowed for messages with role "
                   "'user', but this message with role 'tool' contains an image URL.",
        "type": "invalid_request_error", "param": "messages[2]", "code": "invalid_value"}}


# --- OpenAI Responses ----------------------------------------------------------------------------

RESPONSES_TOOLS: list[Any] = [{"type": "function", "name": "camera_snapshot",
                               "description": "Take a photo.", "parameters": SCHEMA,
                               "strict": False}]


def test_the_simulator_knows_every_field_the_sdk_declares() -> None:
    declared = set(typing.get_type_hints(response_create_params.ResponseCreateParamsNonStreaming))
    declared |= set(typing.get_type_hints(response_create_params.ResponseCreateParamsStreaming))
    assert declared == RESPONSE_CREATE_FIELDS


@pytest.mark.parametrize("wire", ["openai-responses", "xai-responses"])
async def test_openai_responses_sdk_does_a_tool_round_with_an_image(wire: str) -> None:
    async with (
        run_simulator(any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls[wire], max_retries=0) as client,
    ):
        extra: dict[str, Any] = {
            "include": ["reasoning.encrypted_content"], "reasoning": {"effort": "low"},
            "prompt_cache_key": "pk", "parallel_tool_calls": True, "top_p": 1.0,
            "truncation": "disabled", "metadata": {"run": "sdk"}, "user": "u",
            "safety_identifier": "s", "service_tier": "auto", "max_tool_calls": 4,
            "text": {"format": {"type": "text"}}, "store": False, "background": False,
            "top_logprobs": 0, "instructions": "Be brief.", "max_output_tokens": 256,
            "temperature": 0.2, "tool_choice": "auto",
            "prompt_cache_retention": "24h",
        }
        question: Any = {"role": "user", "content": "What does the camera see?"}
        first = await client.responses.create(model="gpt-sim", input=[question],
                                              tools=RESPONSES_TOOLS, **extra)
        call = first.output[0]
        assert call.type == "function_call"
        assert call.name == "camera_snapshot"
        output: Any = {"type": "function_call_output", "call_id": call.call_id, "output": [
            {"type": "input_text", "text": "snapshot taken"},
            {"type": "input_image", "detail": "auto",
             "image_url": f"data:image/png;base64,{b64(red_green())}"}]}
        second = await client.responses.create(
            model="gpt-sim", tools=RESPONSES_TOOLS, **extra,
            input=[question, call.model_dump(exclude_none=True), output,
                   {"role": "developer", "content": "Name the colours."}])
    assert second.output_text == SEEN


async def test_responses_refuse_an_unknown_parameter_with_openais_body() -> None:
    async with (
        run_simulator(any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-responses"], max_retries=0) as client,
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            await client.responses.create(model="gpt-sim", input="hi",
                                          extra_body={"reasoning_effort": "low"})
    assert refused.value.response.json() == {"error": {
        "message": "Unknown parameter: 'reasoning_effort'.", "type": "invalid_request_error",
        "param": "reasoning_effort", "code": "unknown_parameter"}}


# --- Gemini --------------------------------------------------------------------------------------


def _genai(base_url: str, version: str) -> genai.Client:
    return genai.Client(api_key="k", http_options=gtypes.HttpOptions(
        base_url=base_url.rsplit("/", 1)[0], api_version=version))


@pytest.mark.parametrize("version", ["v1beta", "v1"])
async def test_google_genai_sdk_does_a_tool_round_with_an_image(version: str) -> None:
    config = gtypes.GenerateContentConfig(
        system_instruction="You look through the camera.",
        tools=[gtypes.Tool(function_declarations=[gtypes.FunctionDeclaration(
            name="camera_snapshot", description="Take a photo.", parameters_json_schema=SCHEMA)])],
        tool_config=gtypes.ToolConfig(function_calling_config=gtypes.FunctionCallingConfig(
            mode=gtypes.FunctionCallingConfigMode.AUTO)),
        safety_settings=[gtypes.SafetySetting(
            category=gtypes.HarmCategory.HARM_CATEGORY_HARASSMENT,
            threshold=gtypes.HarmBlockThreshold.BLOCK_ONLY_HIGH)],
        candidate_count=1, response_modalities=["TEXT"], max_output_tokens=256, temperature=0.2)
    async with run_simulator(any_model=True) as sim:
        client = _genai(sim.base_urls["gemini"], version)
        question = gtypes.Content(role="user", parts=[gtypes.Part(text="What does it see?")])
        first = await client.aio.models.generate_content(model="gemini-3-sim",
                                                         contents=[question], config=config)
        assert first.function_calls is not None
        assert first.function_calls[0].name == "camera_snapshot"
        assert first.candidates and first.candidates[0].content
        answer = gtypes.Content(role="user", parts=[gtypes.Part(
            function_response=gtypes.FunctionResponse(
                name="camera_snapshot", response={"output": "snapshot taken"},
                parts=[gtypes.FunctionResponsePart(inline_data=gtypes.FunctionResponseBlob(
                    mime_type="image/png", data=red_green()))]))])
        second = await client.aio.models.generate_content(
            model="gemini-3-sim", contents=[question, first.candidates[0].content, answer],
            config=config)
    assert second.text == SEEN


async def test_gemini_takes_snake_case_fields_and_url_safe_base64() -> None:
    image = base64.urlsafe_b64encode(red_green("JPEG")).decode().rstrip("=")
    body = {
        "system_instruction": {"parts": [{"text": "You look through the camera."}]},
        "tools": [{"function_declarations": [{"name": "camera_snapshot",
                                              "parameters_json_schema": SCHEMA}]}],
        "tool_config": {"function_calling_config": {"mode": "AUTO"}},
        "generation_config": {"max_output_tokens": 64, "candidate_count": 1,
                              "response_modalities": ["TEXT"]},
        "contents": [
            {"role": "user", "parts": [{"text": "What does it see?"}]},
            {"role": "model", "parts": [{"function_call": {"name": "camera_snapshot",
                                                           "args": {"width_px": 64}},
                                         "thought_signature": "c2lnLTE"}]},
            {"role": "user", "parts": [{"function_response": {
                "name": "camera_snapshot", "response": {"output": "snapshot taken"}}}]},
            {"role": "user", "parts": [{"inline_data": {"mime_type": "image/jpeg",
                                                        "data": image}}]},
        ],
    }
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(f"{sim.base_urls['gemini']}/models/gemini-3-sim:generateContent",
                                   headers={"x-goog-api-key": "k"}, json=body)
    assert response.status_code == 200, response.text
    assert response.json()["candidates"][0]["content"]["parts"] == [{"text": SEEN}]


async def test_gemini_still_refuses_unknown_fields_with_googles_shape() -> None:
    async with run_simulator(any_model=True) as sim:
        client = genai.Client(api_key="k", http_options=gtypes.HttpOptions(
            base_url=sim.base_urls["gemini"].rsplit("/", 1)[0],
            extra_body={"reasoning_effort": "low"}))
        with pytest.raises(genai_errors.ClientError) as refused:
            await client.aio.models.generate_content(model="gemini-3-sim", contents="hi")
    assert refused.value.code == 400
    assert refused.value.status == "INVALID_ARGUMENT"
    assert "reasoning_effort" in str(refused.value.message)


async def test_gemini_refuses_base64_that_is_neither_alphabet() -> None:
    body = {"contents": [{"role": "user", "parts": [
        {"inline_data": {"mime_type": "image/png", "data": "iVBO*w0K"}}]}]}
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(f"{sim.base_urls['gemini']}/models/gemini-3-sim:generateContent",
                                   headers={"x-goog-api-key": "k"}, json=body)
    assert response.status_code == 400
    assert response.json()["error"]["status"] == "INVALID_ARGUMENT"
