"""The official SDK clients stream a tool round with an image and back through the simulator.

Each SDK's own stream reader puts the answer together; it must be the non-streamed answer, arrive
in several deltas, and a stream cut part way must fail the way that SDK fails on a real one.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import anyio
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

from fuseforks.simulator import Fault, Script, run_simulator
from tests.helpers.sdk_errors import assert_cut_stream
from tests.simulator.test_sdk_clients import (
    ANTHROPIC_TOOLS,
    CHAT_TOOLS,
    HELLO,
    RESPONSES_TOOLS,
    SCHEMA,
    SEEN,
    _genai,
    b64,
    red_green,
)

ARGS = {"width_px": 64, "label": "front door"}  # 36 to 40 characters of JSON: five deltas
SCRIPT = Script(arguments=json.dumps(ARGS))
SEEN_PIECES = ["I see 1 ", "image. image 1: ", "left half red, ", "right half green."]
HELLO_PIECES = ["Hello from the ", "fuseforks simulator."]
QUESTION = "What does the camera see?"


def sse_events(text: str) -> list[tuple[str | None, Any]]:
    """(event, data) of each frame of a server-sent-events body, data parsed as JSON."""
    events: list[tuple[str | None, Any]] = []
    for frame in text.replace("\r\n", "\n").split("\n\n"):
        if not frame:
            continue
        fields = dict(line.split(": ", 1) for line in frame.split("\n"))
        data = fields["data"]
        events.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return events


# --- Anthropic ---------------------------------------------------------------------------------


def _anthropic(base_url: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="k", base_url=base_url, max_retries=0)


def _anthropic_answer_turn(call_id: str) -> dict[str, Any]:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                          "data": b64(red_green())}}
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": [image]}]}


async def test_anthropic_message_stream_does_a_tool_round_with_an_image() -> None:
    async with run_simulator(script=SCRIPT, any_model=True) as sim, _anthropic(sim.base_urls["anthropic"]) as client:
        question: Any = {"role": "user", "content": QUESTION}
        async with client.messages.stream(model="claude-sim", max_tokens=256,
                                          messages=[question], tools=ANTHROPIC_TOOLS) as stream:
            json_deltas = [e.partial_json async for e in stream if e.type == "input_json"]
            first = await stream.get_final_message()
        assert first.stop_reason == "tool_use"
        call = first.content[0]
        assert call.type == "tool_use"
        assert call.name == "camera_snapshot"
        assert call.input == ARGS
        assert len(json_deltas) == 5
        assert json.loads("".join(json_deltas)) == ARGS
        messages: Any = [question, {"role": "assistant", "content": first.content},
                         _anthropic_answer_turn(call.id)]
        async with client.messages.stream(model="claude-sim", max_tokens=256,
                                          messages=messages, tools=ANTHROPIC_TOOLS) as stream:
            deltas = [text async for text in stream.text_stream]
            second = await stream.get_final_message()
        whole = await client.messages.create(model="claude-sim", max_tokens=256,
                                             messages=messages, tools=ANTHROPIC_TOOLS)
    assert deltas == SEEN_PIECES
    assert "".join(deltas) == SEEN
    assert second.stop_reason == "end_turn"
    assert [b.type for b in second.content] == ["text"]
    assert second.content[0].type == "text"
    assert second.content[0].text == SEEN
    assert whole.content[0].type == "text"
    assert whole.content[0].text == second.content[0].text
    assert (second.usage.input_tokens, second.usage.output_tokens) == (102, 10)


async def test_anthropic_create_stream_true_yields_the_raw_events() -> None:
    async with run_simulator(script=SCRIPT, any_model=True) as sim, _anthropic(sim.base_urls["anthropic"]) as client:
        question: Any = {"role": "user", "content": QUESTION}
        calling = await client.messages.create(model="claude-sim", max_tokens=256, stream=True,
                                               messages=[question], tools=ANTHROPIC_TOOLS)
        events = [event async for event in calling]
        assert [e.type for e in events] == [
            "message_start", "content_block_start", *["content_block_delta"] * 5,
            "content_block_stop", "message_delta", "message_stop"]
        start = events[1]
        assert start.type == "content_block_start"
        assert start.content_block.type == "tool_use"
        assert (start.content_block.id, start.content_block.name) == ("toolu_0001_0",
                                                                      "camera_snapshot")
        pieces = [e.delta.partial_json for e in events
                  if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
        assert json.loads("".join(pieces)) == ARGS
        stop = events[-2]
        assert stop.type == "message_delta"
        assert (stop.delta.stop_reason, stop.usage.output_tokens) == ("tool_use", 10)
        tool_use = {"type": "tool_use", "id": "toolu_0001_0", "name": "camera_snapshot",
                    "input": json.loads("".join(pieces))}
        messages: Any = [question, {"role": "assistant", "content": [tool_use]},
                         _anthropic_answer_turn("toolu_0001_0")]
        answering = await client.messages.create(model="claude-sim", max_tokens=256, stream=True,
                                                 tools=ANTHROPIC_TOOLS, messages=messages)
        texts = [e.delta.text async for e in answering
                 if e.type == "content_block_delta" and e.delta.type == "text_delta"]
    assert texts == SEEN_PIECES
    assert "".join(texts) == SEEN


async def test_anthropic_stream_on_the_wire_has_event_and_data_lines_and_a_ping() -> None:
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['anthropic']}/v1/messages",
            headers={"x-api-key": "k", "anthropic-version": "2023-06-01"},
            json={"model": "m", "max_tokens": 8, "stream": True,
                  "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["transfer-encoding"] == "chunked"
    events = sse_events(response.text)
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "ping", "content_block_delta",
        "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    assert all(name == data["type"] for name, data in events)
    assert events[0][1]["message"]["content"] == []
    assert events[0][1]["message"]["stop_reason"] is None
    assert events[1][1]["content_block"] == {"type": "text", "text": ""}
    assert [d["delta"] for _, d in events[3:5]] == [
        {"type": "text_delta", "text": p} for p in HELLO_PIECES]
    assert events[6][1] == {"type": "message_delta", "usage": {"output_tokens": 10},
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None}}


async def test_anthropic_sdk_reports_a_cut_stream_as_a_connection_error() -> None:
    received: list[str] = []
    async with run_simulator(any_model=True) as sim, _anthropic(sim.base_urls["anthropic"]) as client:
        sim.inject(Fault.cut(wire="anthropic"))
        with pytest.raises(Exception) as cut:  # its form: asserted below
            async with client.messages.stream(
                model="claude-sim", max_tokens=64,
                messages=[{"role": "user", "content": "hi"}]) as stream:
                async for text in stream.text_stream:
                    received.append(text)
    assert_cut_stream(cut.value, connection_error=(anthropic.APIConnectionError,),
                      timeout_error=(anthropic.APITimeoutError,))
    assert received == HELLO_PIECES[:1]  # 4 of the 8 frames arrived: the first delta among them
    assert sim.received[-1].status == 200


async def test_anthropic_refusals_before_a_stream_stay_json_errors() -> None:
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['anthropic']}/v1/messages",
            headers={"anthropic-version": "2023-06-01"},
            json={"model": "m", "max_tokens": 8, "stream": True,
                  "messages": [{"role": "user", "content": "hi"}]})
        assert response.status_code == 401
        assert response.headers["content-type"] == "application/json"
        assert response.json()["error"]["type"] == "authentication_error"
        async with _anthropic(sim.base_urls["anthropic"]) as client:
            with pytest.raises(anthropic.BadRequestError) as refused:
                async with client.messages.stream(
                        model="claude-sim", max_tokens=8,
                        messages=[{"role": "assistant", "content": "hi"}]):
                    pass
    assert refused.value.body == {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "messages: first message must use the \"user\" role"}}


# --- OpenAI Chat Completions ---------------------------------------------------------------------


def _chat_messages(question: Any, call: dict[str, Any]) -> list[Any]:
    return [question, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": "snapshot taken"},
            {"role": "user", "content": [
                {"type": "text", "text": "The snapshot:"},
                {"type": "image_url",
                 "image_url": {"url": f"data:image/png;base64,{b64(red_green())}"}}]}]


@pytest.mark.parametrize("include_usage", [False, True])
async def test_openai_chat_stream_does_a_tool_round_with_an_image(include_usage: bool) -> None:
    options: Any = {"stream_options": {"include_usage": True}} if include_usage else {}
    async with (
        run_simulator(script=SCRIPT, any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-compat"],
                           max_retries=0) as client,
    ):
        question: Any = {"role": "user", "content": QUESTION}
        chunks = [c async for c in await client.chat.completions.create(
            model="gpt-sim", messages=[question], tools=CHAT_TOOLS, stream=True, **options)]
        answer = chunks[:-1] if include_usage else chunks
        first_delta = answer[0].choices[0].delta
        assert first_delta.role == "assistant"
        assert first_delta.tool_calls is not None
        opened = first_delta.tool_calls[0]
        assert (opened.index, opened.id, opened.type) == (0, "call_0001_0", "function")
        assert opened.function is not None
        assert (opened.function.name, opened.function.arguments) == ("camera_snapshot", "")
        pieces = [call.function.arguments for c in answer[1:-1]
                  for call in c.choices[0].delta.tool_calls or [] if call.function]
        assert len(pieces) == 5
        assert [c.choices[0].finish_reason for c in answer] == [None] * 6 + ["tool_calls"]
        assert json.loads("".join(p or "" for p in pieces)) == ARGS
        call = {"id": opened.id, "type": "function",
                "function": {"name": "camera_snapshot", "arguments": "".join(p or "" for p in pieces)}}
        chunks = [c async for c in await client.chat.completions.create(
            model="gpt-sim", messages=_chat_messages(question, call), tools=CHAT_TOOLS,
            stream=True, **options)]
        whole = await client.chat.completions.create(
            model="gpt-sim", messages=_chat_messages(question, call), tools=CHAT_TOOLS)
    answer = chunks[:-1] if include_usage else chunks
    assert answer[0].choices[0].delta.role == "assistant"
    deltas = [c.choices[0].delta.content for c in answer[1:-1]]
    assert deltas == SEEN_PIECES
    assert "".join(p or "" for p in deltas) == SEEN == whole.choices[0].message.content
    assert answer[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in answer)
    if include_usage:
        assert chunks[-1].choices == []
        assert chunks[-1].usage is not None
        assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (102, 10)


async def test_openai_chat_stream_helper_puts_the_completion_together() -> None:
    async with (
        run_simulator(script=SCRIPT, any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-compat"],
                           max_retries=0) as client,
    ):
        question: Any = {"role": "user", "content": QUESTION}
        async with client.chat.completions.stream(
                model="gpt-sim", messages=[question], tools=CHAT_TOOLS,
                stream_options={"include_usage": True}) as stream:
            argument_deltas = [e.arguments_delta async for e in stream
                               if e.type == "tool_calls.function.arguments.delta"]
            first = await stream.get_final_completion()
        calls = first.choices[0].message.tool_calls
        assert calls is not None
        call = calls[0]
        assert call.type == "function"
        assert json.loads(call.function.arguments) == ARGS
        assert argument_deltas[0] == ""  # the opening chunk's, with the call's id and name
        assert len(argument_deltas) == 6
        assert "".join(argument_deltas) == SCRIPT.arguments
        messages = _chat_messages(question, {"id": call.id, "type": "function", "function": {
            "name": call.function.name, "arguments": call.function.arguments}})
        async with client.chat.completions.stream(model="gpt-sim", messages=messages,
                                                  tools=CHAT_TOOLS) as stream:
            deltas = [e.delta async for e in stream if e.type == "content.delta"]
            second = await stream.get_final_completion()
    assert first.usage is not None
    assert first.usage.completion_tokens == 10
    assert deltas == ["", *SEEN_PIECES]  # the role chunk's empty content, then the text
    assert second.choices[0].message.content == SEEN
    assert second.choices[0].finish_reason == "stop"


async def test_openai_chat_stream_ends_with_done_on_the_wire() -> None:
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['openai-compat']}/chat/completions",
            headers={"authorization": "Bearer k"},
            json={"model": "m", "stream": True, "stream_options": {"include_usage": True},
                  "messages": [{"role": "user", "content": "hi"}]})
    events = sse_events(response.text)
    assert all(name is None for name, _ in events)
    assert events[-1] == (None, "[DONE]")
    chunks = [data for _, data in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert [c["choices"][0]["delta"] if c["choices"] else None for c in chunks] == [
        {"role": "assistant", "content": "", "refusal": None},
        {"content": HELLO_PIECES[0]}, {"content": HELLO_PIECES[1]}, {}, None]
    assert [c["usage"] for c in chunks[:-1]] == [None] * 4
    assert chunks[-1]["usage"]["completion_tokens"] == 10


async def test_openai_chat_sdk_reports_a_cut_stream_as_a_connection_error() -> None:
    received: list[str | None] = []
    async with (
        run_simulator(any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-compat"],
                           max_retries=0) as client,
    ):
        sim.inject(Fault.cut(wire="openai-compat"))
        stream = await client.chat.completions.create(
            model="gpt-sim", messages=[{"role": "user", "content": "hi"}], stream=True)
        with pytest.raises(Exception) as cut:  # its form: asserted below
            async for chunk in stream:
                received.append(chunk.choices[0].delta.content)
    assert_cut_stream(cut.value, connection_error=(openai.APIConnectionError,),
                      timeout_error=(openai.APITimeoutError,))
    assert received == ["", HELLO_PIECES[0]]  # 2 of the 5 frames (4 chunks and [DONE])


async def test_openai_chat_refuses_stream_options_without_stream() -> None:
    async with (
        run_simulator(any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-compat"],
                           max_retries=0) as client,
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(
                model="gpt-sim", messages=[{"role": "user", "content": "hi"}],
                stream_options={"include_usage": True})
    assert refused.value.response.json() == {"error": {
        "message": "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "type": "invalid_request_error", "param": "stream_options", "code": None}}


# --- OpenAI Responses ----------------------------------------------------------------------------


def _responses_output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": [
        {"type": "input_text", "text": "snapshot taken"},
        {"type": "input_image", "detail": "auto",
         "image_url": f"data:image/png;base64,{b64(red_green())}"}]}


@pytest.mark.parametrize("wire", ["openai-responses", "xai-responses"])
async def test_openai_responses_stream_does_a_tool_round_with_an_image(wire: str) -> None:
    async with (
        run_simulator(script=SCRIPT, any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls[wire], max_retries=0) as client,
    ):
        question: Any = {"role": "user", "content": QUESTION}
        async with client.responses.stream(model="gpt-sim", input=[question],
                                           tools=RESPONSES_TOOLS) as stream:
            argument_deltas = [e.delta async for e in stream
                               if e.type == "response.function_call_arguments.delta"]
            first = await stream.get_final_response()
        call = first.output[0]
        assert call.type == "function_call"
        assert call.name == "camera_snapshot"
        assert json.loads(call.arguments) == ARGS
        assert len(argument_deltas) == 5
        assert "".join(argument_deltas) == call.arguments
        second_input: Any = [question, call.model_dump(exclude_none=True),
                             _responses_output(call.call_id)]
        async with client.responses.stream(model="gpt-sim", input=second_input,
                                           tools=RESPONSES_TOOLS) as stream:
            deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
            second = await stream.get_final_response()
        whole = await client.responses.create(model="gpt-sim", input=second_input,
                                              tools=RESPONSES_TOOLS)
    assert deltas == SEEN_PIECES
    assert "".join(deltas) == second.output_text == SEEN == whole.output_text
    assert second.status == "completed"
    assert second.usage is not None
    assert (second.usage.input_tokens, second.usage.output_tokens) == (102, 10)


async def test_openai_responses_create_stream_true_numbers_every_event() -> None:
    async with (
        run_simulator(script=SCRIPT, any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-responses"],
                           max_retries=0) as client,
    ):
        question: Any = {"role": "user", "content": QUESTION}
        calls = [e async for e in await client.responses.create(
            model="gpt-sim", input=[question], tools=RESPONSES_TOOLS, stream=True)]
        assert [e.type for e in calls] == [
            "response.created", "response.in_progress", "response.output_item.added",
            *["response.function_call_arguments.delta"] * 5,
            "response.function_call_arguments.done", "response.output_item.done",
            "response.completed"]
        done = calls[-3]
        assert done.type == "response.function_call_arguments.done"
        assert json.loads(done.arguments) == ARGS
        completed = calls[-1]
        assert completed.type == "response.completed"
        call = completed.response.output[0]
        assert call.type == "function_call"
        second_input: Any = [question, call.model_dump(exclude_none=True),
                             _responses_output(call.call_id)]
        texts = [e async for e in await client.responses.create(
            model="gpt-sim", tools=RESPONSES_TOOLS, stream=True, input=second_input)]
    assert [e.type for e in texts] == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", *["response.output_text.delta"] * 4,
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed"]
    assert [e.sequence_number for e in calls] == list(range(11))
    assert [e.sequence_number for e in texts] == list(range(12))
    created, finished = texts[0], texts[-1]
    assert created.type == "response.created"
    assert (created.response.status, created.response.output) == ("in_progress", [])
    assert finished.type == "response.completed"
    assert finished.response.output_text == SEEN
    assert finished.response.usage is not None
    assert finished.response.usage.total_tokens == 112


async def test_openai_responses_sdk_raises_api_connection_error_on_a_cut_stream() -> None:
    received: list[str] = []
    async with (
        run_simulator(any_model=True) as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls["openai-responses"],
                           max_retries=0) as client,
    ):
        sim.inject(Fault.cut(wire="openai-responses", frames=6))
        with pytest.raises(Exception) as cut:  # its form: asserted below
            async with client.responses.stream(model="gpt-sim", input="hi") as stream:
                async for event in stream:
                    received.append(event.type)
    assert_cut_stream(cut.value, connection_error=(openai.APIConnectionError,),
                      timeout_error=(openai.APITimeoutError,))
    assert received == ["response.created", "response.in_progress", "response.output_item.added",
                        "response.content_part.added", "response.output_text.delta",
                        "response.output_text.delta"]


# --- Gemini --------------------------------------------------------------------------------------

GEMINI_CONFIG = gtypes.GenerateContentConfig(tools=[gtypes.Tool(function_declarations=[
    gtypes.FunctionDeclaration(name="camera_snapshot", description="Take a photo.",
                               parameters_json_schema=SCHEMA)])])


@pytest.mark.parametrize("version", ["v1beta", "v1"])
async def test_google_genai_stream_does_a_tool_round_with_an_image(version: str) -> None:
    async with run_simulator(script=SCRIPT, any_model=True) as sim:
        client = _genai(sim.base_urls["gemini"], version)
        question = gtypes.Content(role="user", parts=[gtypes.Part(text=QUESTION)])
        first = [c async for c in await client.aio.models.generate_content_stream(
            model="gemini-3-sim", contents=[question], config=GEMINI_CONFIG)]
        assert len(first) == 1  # a function call comes whole, in one chunk
        assert first[0].function_calls is not None
        assert [(c.name, c.args) for c in first[0].function_calls] == [("camera_snapshot", ARGS)]
        assert first[0].candidates and first[0].candidates[0].content
        assert first[0].candidates[0].finish_reason == gtypes.FinishReason.STOP
        answer = gtypes.Content(role="user", parts=[gtypes.Part(
            function_response=gtypes.FunctionResponse(
                name="camera_snapshot", response={"output": "snapshot taken"},
                parts=[gtypes.FunctionResponsePart(inline_data=gtypes.FunctionResponseBlob(
                    mime_type="image/png", data=red_green()))]))])
        contents = [question, first[0].candidates[0].content, answer]
        chunks = [c async for c in await client.aio.models.generate_content_stream(
            model="gemini-3-sim", contents=contents, config=GEMINI_CONFIG)]
        whole = await client.aio.models.generate_content(model="gemini-3-sim", contents=contents,
                                                         config=GEMINI_CONFIG)
    deltas = [c.text for c in chunks]
    assert deltas == SEEN_PIECES
    assert "".join(d or "" for d in deltas) == SEEN == whole.text
    assert [c.candidates[0].finish_reason if c.candidates else None for c in chunks] == [
        None, None, None, gtypes.FinishReason.STOP]
    assert [c.usage_metadata is not None for c in chunks] == [False, False, False, True]
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata.candidates_token_count == 10


async def test_gemini_streams_sse_with_alt_sse_and_a_json_array_without() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    url = "{}/models/gemini-3-sim:{}"
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient(headers={"x-goog-api-key": "k"}) as http:
        sse = await http.post(url.format(sim.base_urls["gemini"], "streamGenerateContent?alt=sse"),
                              json=body)
        array = await http.post(url.format(sim.base_urls["gemini"], "streamGenerateContent"),
                                json=body)
        whole = await http.post(url.format(sim.base_urls["gemini"], "generateContent"), json=body)
    assert sse.headers["content-type"] == "text/event-stream"
    assert array.headers["content-type"] == "application/json; charset=UTF-8"
    assert sse.text.count("\r\n\r\n") == 2
    frames = [data for _, data in sse_events(sse.text)]
    for chunks, prompt_tokens in ((frames, 101), (array.json(), 102)):  # 100 + the request's seq
        assert [c["candidates"][0]["content"]["parts"] for c in chunks] == [
            [{"text": p}] for p in HELLO_PIECES]
        assert [c["candidates"][0].get("finishReason") for c in chunks] == [None, "STOP"]
        assert "usageMetadata" not in chunks[0]
        assert chunks[-1]["usageMetadata"] == {"promptTokenCount": prompt_tokens,
                                               "candidatesTokenCount": 10,
                                               "totalTokenCount": prompt_tokens + 10}
    assert whole.json()["candidates"][0]["content"]["parts"] == [{"text": HELLO}]


async def test_google_genai_reports_a_cut_stream_as_a_connection_error() -> None:
    received: list[str | None] = []
    async with run_simulator(any_model=True) as sim:
        client = _genai(sim.base_urls["gemini"], "v1beta")
        sim.inject(Fault.cut(wire="gemini"))
        with pytest.raises(Exception) as cut:  # its form: asserted below
            async for chunk in await client.aio.models.generate_content_stream(
                    model="gemini-3-sim", contents="hi"):
                received.append(chunk.text)
    assert_cut_stream(cut.value, connection_error=(genai_errors.APIError,))
    assert received == HELLO_PIECES[:1]


async def test_google_genai_stream_refusal_stays_a_json_client_error() -> None:
    async with run_simulator(any_model=True) as sim:
        client = genai.Client(api_key="k", http_options=gtypes.HttpOptions(
            base_url=sim.base_urls["gemini"].rsplit("/", 1)[0],
            extra_body={"reasoning_effort": "low"}))
        with pytest.raises(genai_errors.ClientError) as refused:
            async for _ in await client.aio.models.generate_content_stream(
                    model="gemini-3-sim", contents="hi"):
                pass
    assert refused.value.code == 400
    assert refused.value.status == "INVALID_ARGUMENT"
    message = refused.value.message
    assert message is not None
    assert message.startswith("Invalid request (body): ")  # our frame; the rest is the decoder's
    assert "reasoning_effort" in message


# --- Faults and latency on streams ---------------------------------------------------------------


async def test_older_faults_still_hit_streamed_requests() -> None:
    async with run_simulator(any_model=True) as sim, _anthropic(sim.base_urls["anthropic"]) as client:
        sim.inject(Fault.error(529, wire="anthropic"), Fault.drop(wire="anthropic"))
        hi: Any = [{"role": "user", "content": "hi"}]
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            async with client.messages.stream(model="claude-sim", max_tokens=8, messages=hi):
                pass
        with pytest.raises(anthropic.APIConnectionError) as dropped:
            async with client.messages.stream(model="claude-sim", max_tokens=8, messages=hi):
                pass
        assert not isinstance(dropped.value, anthropic.APITimeoutError)
        async with client.messages.stream(model="claude-sim", max_tokens=8, messages=hi) as stream:
            assert await stream.get_final_text() == HELLO
    assert overloaded.value.status_code == 529
    assert [r.status for r in sim.received] == [529, None, 200]


async def test_a_cut_whole_answer_sends_half_its_body() -> None:
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        sim.inject(Fault.cut(wire="openai-compat"))
        with pytest.raises(httpx.TransportError):
            await http.post(f"{sim.base_urls['openai-compat']}/chat/completions",
                            headers={"authorization": "Bearer k"},
                            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        queued = await http.post(f"{sim.base_url}/_sim/faults",
                                 content=b'[{"kind":"cut","frames":1,"wire":"openai-compat"}]')
        assert queued.status_code == 200
        async with http.stream(
                "POST", f"{sim.base_urls['openai-compat']}/chat/completions",
                headers={"authorization": "Bearer k"},
                json={"model": "m", "stream": True,
                      "messages": [{"role": "user", "content": "hi"}]}) as response:
            assert response.status_code == 200
            received = bytearray()
            with pytest.raises(httpx.TransportError, match="incomplete"):
                async for data in response.aiter_bytes():
                    received += data
    [(_, chunk)] = sse_events(received.decode())  # the one frame asked for, then the cut
    assert chunk["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}


async def test_latency_delays_the_first_frame() -> None:
    async with run_simulator(script=Script(latency=0.3), any_model=True) as sim, httpx.AsyncClient() as http:
        started = anyio.current_time()
        async with http.stream("POST", f"{sim.base_urls['openai-responses']}/responses",
                               headers={"authorization": "Bearer k"},
                               json={"model": "m", "input": "hi", "stream": True}) as response:
            first = await anext(aiter(response.aiter_bytes()))
            waited = anyio.current_time() - started
    assert response.status_code == 200
    assert first.startswith(b"event: response.created\ndata: ")
    assert waited >= 0.3
