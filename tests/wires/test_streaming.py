"""Streamed answers, wire by wire: real event sequences in, the deltas and the exact response out.

Each fixture in `fixtures/streams/` is a provider's stream (`.sse`) beside the whole answer of the
same content (`.json`); the accumulator must hear the deltas in order and end with the very
`ChatResponse` the non-streaming decoder makes of the whole answer. Then what goes wrong: a
stream cut before its last event, error events mid-stream, a garbled frame.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import msgspec
import pytest

from fuseforks.core.canonical import ChatResponse, ToolCall, Usage
from fuseforks.core.errors import WireGarbage, WireRejected, WireRetryable
from fuseforks.wires import get_wire
from fuseforks.wires.base import Accumulator
from fuseforks.wires.streaming import read_events

STREAMS = Path(__file__).parent / "fixtures" / "streams"
RESPONSES_WIRES = ["openai-responses", "xai-responses", "meta-responses", "perplexity-responses"]


def accumulator(wire: str) -> Accumulator:
    streaming = get_wire(wire).streaming
    assert streaming is not None
    return streaming.accumulator()


async def stream(wire: str, text: str) -> tuple[list[str], ChatResponse]:
    """`text` as an event-stream body through the wire's accumulator: deltas and response."""
    deltas: list[str] = []
    response = httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=text.encode())
    result = await read_events(response, accumulator(wire), deltas.append)
    return deltas, result


async def failing(wire: str, text: str) -> tuple[list[str], Exception]:
    deltas: list[str] = []
    response = httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=text.encode())
    with pytest.raises(Exception) as caught:
        await read_events(response, accumulator(wire), deltas.append)
    return deltas, caught.value


def fixture(name: str) -> tuple[str, bytes]:
    return (STREAMS / f"{name}.sse").read_text(), (STREAMS / f"{name}.json").read_bytes()


def events(text: str) -> list[str]:
    return [block for block in text.split("\n\n") if block.strip()]


CASES = [
    ("anthropic", "anthropic-text-and-tool-use",
     ["Okay", ",", " let", "'s check the weather for San Francisco, CA:"],
     ChatResponse(text="Okay, let's check the weather for San Francisco, CA:",
                  tool_calls=[ToolCall(id="toolu_01T1x1fJ34qAmk2tNTrN7Up6", name="get_weather",
                                       arguments={"location": "San Francisco, CA",
                                                  "unit": "fahrenheit"})],
                  usage=Usage(input_tokens=472, output_tokens=89), stop_reason="tool_use",
                  raw_model="claude-sonnet-4-5-20250929")),
    ("anthropic", "anthropic-thinking-and-cache",
     ["The left half is green", ", the right half magenta."],
     ChatResponse(text="The left half is green, the right half magenta.", tool_calls=[],
                  usage=Usage(input_tokens=2060, output_tokens=57, cache_read_tokens=2048),
                  stop_reason="end_turn", raw_model="claude-sonnet-4-5-20250929")),
    ("openai-compat", "chat-text", ["Hello", "!", " How can I help?"],
     ChatResponse(text="Hello! How can I help?", tool_calls=[],
                  usage=Usage(input_tokens=1925, output_tokens=8, cache_read_tokens=1792),
                  stop_reason="end_turn", raw_model="gpt-4o-mini-2024-07-18")),
    ("openai-compat", "chat-tool-calls", [],
     ChatResponse(text="", tool_calls=[
         ToolCall(id="call_DdmO9pD3xa9XTPNJ32zg2hcA", name="get_weather",
                  arguments={"location": "Paris, France"}),
         ToolCall(id="call_XyP2Qs8Lz0aRtVb1mN4kE7uW", name="get_time")],
         usage=Usage(input_tokens=84, output_tokens=41), stop_reason="tool_use",
         raw_model="gpt-4.1-2025-04-14")),
    *[(wire, "responses-text", ["Hi", " there!", " How can I assist you today?"],
       ChatResponse(text="Hi there! How can I assist you today?", tool_calls=[],
                    usage=Usage(input_tokens=37, output_tokens=11), stop_reason="end_turn",
                    raw_model="gpt-4.1-2025-04-14")) for wire in RESPONSES_WIRES],
    *[(wire, "responses-function-call", [],
       ChatResponse(text="", tool_calls=[ToolCall(id="call_q6X1ayBJJtPNlOaWSyl7ERMD",
                                                  name="get_weather",
                                                  arguments={"location": "Paris, France"})],
                    usage=Usage(input_tokens=291, output_tokens=23, cache_read_tokens=128),
                    stop_reason="tool_use", raw_model="gpt-4.1-2025-04-14"))
      for wire in RESPONSES_WIRES],
    ("gemini", "gemini-text", ["The", " quick brown fox jumps over", " the lazy dog."],
     ChatResponse(text="The quick brown fox jumps over the lazy dog.", tool_calls=[],
                  usage=Usage(input_tokens=8, output_tokens=36), stop_reason="end_turn",
                  raw_model="gemini-2.5-flash")),
]


@pytest.mark.parametrize(("wire", "name", "deltas", "expected"), CASES,
                         ids=[f"{c[0]}:{c[1]}" for c in CASES])
async def test_a_stream_gives_its_deltas_and_the_whole_answers_response(
        wire: str, name: str, deltas: list[str], expected: ChatResponse) -> None:
    sse, whole = fixture(name)
    heard, response = await stream(wire, sse)
    assert heard == deltas
    assert response == expected
    assert response == get_wire(wire).decode(whole)


async def test_gemini_function_call_parts_merge_and_mint_the_ids_the_whole_answer_mints() -> None:
    sse, whole = fixture("gemini-function-call")
    heard, response = await stream("gemini", sse)
    assert heard == ["Let me take", " a photo."]  # the thought is not answer text
    assert response == get_wire("gemini").decode(whole)
    [call] = response.tool_calls
    assert call.id.startswith("gemini-call-") and len(call.id) == len("gemini-call-") + 12 + 2
    assert response == ChatResponse(
        text="Let me take a photo.",
        tool_calls=[ToolCall(id=call.id, name="camera_snapshot", arguments={"zoom": 2},
                             signature="CiQB0e2Kb7Yx3QmB1mJm2C4vOQx3ZzQwYjJkNTg2ZjY0NjA5")],
        usage=Usage(input_tokens=96, output_tokens=64, cache_read_tokens=64),
        stop_reason="tool_use", raw_model="gemini-3-flash-preview")


async def test_minted_gemini_ids_follow_the_content_not_the_bytes() -> None:
    _, whole = fixture("gemini-function-call")
    relaid = msgspec.json.encode(msgspec.json.decode(whole))  # same content, other bytes
    assert relaid != whole
    gemini = get_wire("gemini")
    assert gemini.decode(relaid) == gemini.decode(whole)
    other = whole.replace(b'"zoom": 2', b'"zoom": 3')
    assert gemini.decode(other).tool_calls[0].id != gemini.decode(whole).tool_calls[0].id


ARGUMENTS = '{"location": "San Francisco, CA", "unit": "fahrenheit"}'


def cut_in_three(text: str, i: int, j: int) -> list[str]:
    return [text[:i], text[i:j], text[j:]]


def anthropic_tool_stream(pieces: list[str]) -> str:
    frames = [
        {"type": "message_start", "message": {"id": "m", "model": "claude-x", "content": [],
                                              "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                           "input": {}}},
        *({"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": p}} for p in pieces),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {f['type']}\ndata: {msgspec.json.encode(f).decode()}\n\n"
                   for f in frames)


def chat_tool_stream(pieces: list[str]) -> str:
    first = {"index": 0, "id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": ""}}
    chunks = [{"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [first]}}]},
              *({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [
                  {"index": 0, "function": {"arguments": p}}]}}]} for p in pieces),
              {"model": "gpt-x", "choices": [{"index": 0, "delta": {},
                                              "finish_reason": "tool_calls"}]}]
    return "".join(f"data: {msgspec.json.encode(c).decode()}\n\n" for c in chunks) + \
        "data: [DONE]\n\n"


def responses_tool_stream(pieces: list[str]) -> str:
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_weather",
            "arguments": ""}
    frames = [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        *({"type": "response.function_call_arguments.delta", "output_index": 0,
           "item_id": "fc_1", "delta": p} for p in pieces),
        {"type": "response.completed", "response": {
            "id": "r", "status": "completed", "model": "gpt-x",
            "output": [item | {"arguments": "".join(pieces)}]}},
    ]
    return "".join(f"event: {f['type']}\ndata: {msgspec.json.encode(f).decode()}\n\n"
                   for f in frames)


@pytest.mark.parametrize(("wire", "build"), [
    ("anthropic", anthropic_tool_stream),
    ("openai-compat", chat_tool_stream),
    ("xai-responses", responses_tool_stream),
])
async def test_tool_call_arguments_in_pieces_cut_anywhere_join_to_the_whole(wire, build) -> None:
    """Argument deltas are JSON text cut anywhere (inside a key, a string, an escape): the
    call's arguments are parsed once, whole."""
    expected = {"location": "San Francisco, CA", "unit": "fahrenheit"}
    for i in range(0, len(ARGUMENTS) + 1, 3):
        for j in range(i, len(ARGUMENTS) + 1, 7):
            heard, response = await stream(wire, build(cut_in_three(ARGUMENTS, i, j)))
            assert heard == []
            assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
                ("call_1" if wire != "anthropic" else "toolu_1", "get_weather", expected)]
            assert response.stop_reason == "tool_use"


async def test_responses_output_left_empty_by_the_server_comes_from_the_streamed_items() -> None:
    sse, whole = fixture("responses-function-call")
    head, last = sse.rsplit("event: response.completed", 1)
    emptied = last.replace('"output":[{"id":"fc_68b0c7a96d248190","type":"function_call",'
                           '"status":"completed","arguments":"{\\"location\\":\\"Paris, France'
                           '\\"}","call_id":"call_q6X1ayBJJtPNlOaWSyl7ERMD","name":"get_weather"}]',
                           '"output":[]')
    assert emptied != last
    _, response = await stream("openai-responses", head + "event: response.completed" + emptied)
    assert response == get_wire("openai-responses").decode(whole)


@pytest.mark.parametrize(("wire", "name", "waiting_for"), [
    ("anthropic", "anthropic-text-and-tool-use", "message_stop"),
    ("anthropic", "anthropic-thinking-and-cache", "message_stop"),
    ("openai-compat", "chat-text", "data: [DONE]"),
    ("openai-compat", "chat-tool-calls", "data: [DONE]"),
    ("openai-responses", "responses-text", "response.completed"),
    ("perplexity-responses", "responses-function-call", "response.completed"),
    ("gemini", "gemini-text", "a frame with a finishReason"),
    ("gemini", "gemini-function-call", "a frame with a finishReason"),
])
async def test_a_stream_that_ends_before_its_last_event_is_a_retryable_cut(
        wire: str, name: str, waiting_for: str) -> None:
    sse, _ = fixture(name)
    whole, _ = await stream(wire, sse)
    for keep in (1, len(events(sse)) - 1):
        heard, error = await failing(wire, "\n\n".join(events(sse)[:keep]) + "\n\n")
        assert isinstance(error, WireRetryable)
        assert (error.wire, error.status, error.error_class, error.message) == (
            wire, None, "stream_cut", f"the stream ended before {waiting_for}")
        assert heard == whole[:len(heard)]  # what was heard was the answer so far
    _, error = await failing(wire, "")
    assert isinstance(error, WireRetryable) and error.error_class == "stream_cut"


ANTHROPIC_HEAD = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    '"role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,'
    '"usage":{"input_tokens":10,"output_tokens":1}}}\n\n'
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    '"content_block":{"type":"text","text":""}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    '"delta":{"type":"text_delta","text":"The left"}}\n\n')


async def test_anthropic_overloaded_mid_stream_is_retryable() -> None:
    heard, error = await failing("anthropic", ANTHROPIC_HEAD + (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "Overloaded"}}\n\n'))
    assert heard == ["The left"]
    assert isinstance(error, WireRetryable)
    assert (error.status, error.error_class, error.error_type, error.code, error.message) == (
        None, "stream_error", "overloaded_error", "overloaded_error", "Overloaded")


async def test_anthropic_refusal_mid_stream_is_a_refusal() -> None:
    _, error = await failing("anthropic", ANTHROPIC_HEAD + (
        'event: error\ndata: {"type": "error", "error": {"type": "invalid_request_error", '
        '"message": "Could not process image"}}\n\n'))
    assert isinstance(error, WireRejected)
    assert (error.status, error.refusal, error.code) == (400, "image", "invalid_request_error")


async def test_chat_completions_error_chunk_mid_stream() -> None:
    sse, _ = fixture("chat-text")
    head = "\n\n".join(events(sse)[:2]) + "\n\n"
    heard, error = await failing("openai-compat", head + (
        'data: {"error": {"message": "The server had an error while processing your request. '
        'Sorry about that!", "type": "server_error", "param": null, "code": null}}\n\n'))
    assert heard == ["Hello"]
    assert isinstance(error, WireRetryable)
    assert (error.status, error.error_class, error.code, error.message) == (
        None, "stream_error", "server_error",
        "The server had an error while processing your request. Sorry about that!")
    _, error = await failing("openai-compat", head + (
        'data: {"error": {"message": "Invalid image.", "type": "invalid_request_error", '
        '"param": null, "code": "invalid_image_format"}}\n\n'))
    assert isinstance(error, WireRejected)
    assert (error.status, error.refusal, error.code) == (400, "image", "invalid_image_format")


RESPONSES_HEAD = (
    'event: response.created\ndata: {"type":"response.created","sequence_number":0,'
    '"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-4.1",'
    '"output":[]}}\n\n'
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
    '"sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"I see"}'
    '\n\n')


@pytest.mark.parametrize("wire", RESPONSES_WIRES)
async def test_responses_failed_and_error_events(wire: str) -> None:
    heard, error = await failing(wire, RESPONSES_HEAD + (
        'event: response.failed\ndata: {"type":"response.failed","sequence_number":2,'
        '"response":{"id":"resp_1","object":"response","status":"failed","error":{"code":'
        '"server_error","message":"The model failed to generate a response."},"output":[]}}\n\n'))
    assert heard == ["I see"]
    assert isinstance(error, WireRetryable)
    assert (error.wire, error.status, error.error_class, error.code, error.message) == (
        wire, None, "stream_error", "server_error", "The model failed to generate a response.")
    _, error = await failing(wire, RESPONSES_HEAD + (
        'event: response.failed\ndata: {"type":"response.failed","sequence_number":2,'
        '"response":{"id":"resp_1","status":"failed","error":{"code":"invalid_image_format",'
        '"message":"You uploaded an unsupported image."},"output":[]}}\n\n'))
    assert isinstance(error, WireRejected)
    assert (error.status, error.refusal, error.code) == (400, "image", "invalid_image_format")
    _, error = await failing(wire, RESPONSES_HEAD + (
        'event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":'
        '"Rate limit reached.","param":null,"sequence_number":2}\n\n'))
    assert isinstance(error, WireRetryable)
    assert (error.error_class, error.code) == ("stream_error", "rate_limit_exceeded")


async def test_gemini_error_frame_mid_stream() -> None:
    sse, _ = fixture("gemini-text")
    head = events(sse)[0] + "\n\n"
    heard, error = await failing("gemini", head + (
        'data: {"error": {"code": 503, "message": "The model is overloaded. Please try again '
        'later.", "status": "UNAVAILABLE"}}\n\n'))
    assert heard == ["The"]
    assert isinstance(error, WireRetryable)
    assert (error.status, error.error_class, error.code, error.message) == (
        None, "stream_error", "UNAVAILABLE", "The model is overloaded. Please try again later.")
    _, error = await failing("gemini", head + (
        'data: {"error": {"code": 400, "message": "Unable to process input image. Please retry '
        'or report in https://developers.generativeai.google/guide/troubleshooting", '
        '"status": "INVALID_ARGUMENT"}}\n\n'))
    assert isinstance(error, WireRejected)
    assert (error.status, error.refusal, error.code) == (400, "image", "INVALID_ARGUMENT")


@pytest.mark.parametrize(("wire", "frame"), [
    ("anthropic", 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'),
    ("anthropic", 'event: content_block_delta\ndata: {"type":"content_block_delta","index":7,'
                  '"delta":{"type":"text_delta","text":"x"}}'),
    ("openai-compat", 'data: {"choices": [{"index": 0, "delta": {"content": 5}}]}'),
    ("openai-responses", 'event: response.output_text.delta\ndata: not json'),
    ("gemini", 'data: {"candidates": [{"content": {"parts": [{"text": '),
])
async def test_a_garbled_frame_is_garbage(wire: str, frame: str) -> None:
    head = {"anthropic": ANTHROPIC_HEAD, "openai-responses": RESPONSES_HEAD}.get(wire, "")
    _, error = await failing(wire, head + frame + "\n\n")
    assert isinstance(error, WireGarbage)
    assert (error.wire, error.error_class) == (wire, "garbage")


async def test_anthropic_tool_input_that_is_not_an_object_is_garbage() -> None:
    _, error = await failing("anthropic", ANTHROPIC_HEAD + (
        'event: content_block_start\ndata: {"type":"content_block_start","index":1,'
        '"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}\n\n'
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,'
        '"delta":{"type":"input_json_delta","partial_json":"[1, 2"}}\n\n'
        'event: message_stop\ndata: {"type":"message_stop"}\n\n'))
    assert isinstance(error, WireGarbage)
    assert error.message == "tool call arguments are not a JSON object"
