"""Responses and errors as each provider writes them, mapped to the canonical shape."""

from __future__ import annotations

import msgspec
import pytest

from fuseforks.core.canonical import ChatResponse, ToolCall, Usage
from fuseforks.core.errors import WireGarbage, WireRejected, WireRetryable
from fuseforks.wires import WIRES, get_wire

J = msgspec.json.encode


def test_anthropic_response_with_text_tool_use_and_cache_usage() -> None:
    body = J({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
              "content": [{"type": "thinking", "thinking": "…", "signature": "s"},
                          {"type": "text", "text": "Looking."},
                          {"type": "tool_use", "id": "toolu_1", "name": "snap", "input": {"z": 2}}],
              "stop_reason": "tool_use", "stop_sequence": None,
              "usage": {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 400,
                        "cache_creation_input_tokens": 458}})
    assert get_wire("anthropic").decode(body) == ChatResponse(
        text="Looking.", tool_calls=[ToolCall(id="toolu_1", name="snap", arguments={"z": 2})],
        usage=Usage(input_tokens=870, output_tokens=7, cache_read_tokens=400, cache_write_tokens=458),
        stop_reason="tool_use", raw_model="claude-x")


# Canonical usage (the `Usage` docstring): input_tokens counts every prompt token, cached ones
# included; cache reads and writes are parts of it. Bodies shaped as each provider answers today.
USAGE_BODIES = {
    "anthropic": {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 21, "cache_creation_input_tokens": 1888,
                  "cache_read_input_tokens": 12000,
                  "cache_creation": {"ephemeral_5m_input_tokens": 1888,
                                     "ephemeral_1h_input_tokens": 0},
                  "output_tokens": 393, "service_tier": "standard"}},
    "openai-compat": {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1780000000, "model": "gpt-4.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok", "refusal": None,
                                             "annotations": []},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 13909, "completion_tokens": 393, "total_tokens": 14302,
                  "prompt_tokens_details": {"cached_tokens": 12000, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0,
                                                "rejected_prediction_tokens": 0}},
        "service_tier": "default", "system_fingerprint": None},
    "openai-responses": {
        "id": "resp_1", "object": "response", "created_at": 1780000000, "status": "completed",
        "model": "gpt-5.5", "output": [{"type": "message", "id": "msg_1", "status": "completed",
                                        "role": "assistant", "content": [
                                            {"type": "output_text", "text": "ok",
                                             "annotations": []}]}],
        "usage": {"input_tokens": 13909, "input_tokens_details": {"cached_tokens": 12000},
                  "output_tokens": 393, "output_tokens_details": {"reasoning_tokens": 128},
                  "total_tokens": 14302}},
    "gemini": {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 13909, "candidatesTokenCount": 265,
                          "totalTokenCount": 14302, "cachedContentTokenCount": 12000,
                          "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1909},
                                                  {"modality": "IMAGE", "tokenCount": 12000}],
                          "cacheTokensDetails": [{"modality": "IMAGE", "tokenCount": 12000}],
                          "thoughtsTokenCount": 128},
        "modelVersion": "gemini-3.8-flash", "responseId": "r1"},
    # Bedrock's inputTokens leaves the cached parts out, as Anthropic's does (AWS's prompt
    # caching guide; anomalyco/opencode#38427 measured it).
    "bedrock-converse": {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 21, "outputTokens": 393, "totalTokens": 14302,
                  "cacheReadInputTokens": 12000, "cacheWriteInputTokens": 1888},
        "metrics": {"latencyMs": 812}},
}
# A wire that speaks another's format at another address reads that format's body.
FORMAT_OF = {"vertex-gemini": "gemini", "vertex-anthropic": "anthropic",
             "azure-chat": "openai-compat", "azure-responses": "openai-responses",
             "ollama": "openai-compat", "vllm": "openai-compat", "llamacpp": "openai-compat",
             "lmstudio": "openai-compat"}
USAGE = {
    "anthropic": Usage(input_tokens=13909, output_tokens=393, cache_read_tokens=12000,
                       cache_write_tokens=1888),
    "openai-compat": Usage(input_tokens=13909, output_tokens=393, cache_read_tokens=12000),
    "openai-responses": Usage(input_tokens=13909, output_tokens=393, cache_read_tokens=12000),
    "gemini": Usage(input_tokens=13909, output_tokens=393, cache_read_tokens=12000),
    "bedrock-converse": Usage(input_tokens=13909, output_tokens=393, cache_read_tokens=12000,
                              cache_write_tokens=1888),
}


@pytest.mark.parametrize("wire", WIRES)
def test_usage_means_the_same_on_every_wire(wire: str) -> None:
    form = FORMAT_OF.get(wire, wire)
    body = USAGE_BODIES.get(form, USAGE_BODIES["openai-responses"])
    usage = get_wire(wire).decode(J(body)).usage
    assert usage == USAGE.get(form, USAGE["openai-responses"])
    assert usage.cache_read_tokens + usage.cache_write_tokens <= usage.input_tokens


def test_gemini_tool_use_prompt_tokens_are_prompt_tokens() -> None:
    body = J({"candidates": [], "usageMetadata": {
        "promptTokenCount": 100, "toolUsePromptTokenCount": 40, "candidatesTokenCount": 5,
        "totalTokenCount": 145}})
    assert get_wire("gemini").decode(body).usage == Usage(input_tokens=140, output_tokens=5)


def test_openai_compat_response_with_parallel_calls() -> None:
    body = J({"id": "c", "object": "chat.completion", "model": "grok-x", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "s", "arguments": "{}"}},
                       {"id": "b", "type": "function", "function": {"name": "t", "arguments": '{"n":1}'}}]}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 16}}})
    assert get_wire("openai-compat").decode(body) == ChatResponse(
        text="", tool_calls=[ToolCall(id="a", name="s"), ToolCall(id="b", name="t", arguments={"n": 1})],
        usage=Usage(input_tokens=30, output_tokens=5, cache_read_tokens=16),
        stop_reason="tool_use", raw_model="grok-x")


def test_gemini_response_mints_stable_ids_keeps_signatures_and_skips_thoughts() -> None:
    body = J({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "thinking…", "thought": True},
        {"functionCall": {"name": "snap", "args": {}}, "thoughtSignature": "c2ln"}]},
        "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 3, "thoughtsTokenCount": 4,
                          "cachedContentTokenCount": 2}, "modelVersion": "gemini-x"})
    first, again = get_wire("gemini").decode(body), get_wire("gemini").decode(body)
    assert first == again
    assert first.text == "" and first.stop_reason == "tool_use"
    assert first.tool_calls[0].id.startswith("gemini-call-")
    assert first.tool_calls[0].signature == "c2ln"
    assert first.usage == Usage(input_tokens=9, output_tokens=7, cache_read_tokens=2)


@pytest.mark.parametrize("wire", [w for w in WIRES if w.endswith("-responses")])
def test_responses_answer_and_incomplete(wire: str) -> None:
    done = J({"id": "r", "object": "response", "status": "completed", "model": "m",
              "output": [{"type": "reasoning", "id": "rs", "summary": []},
                         {"type": "message", "role": "assistant", "content": [
                             {"type": "output_text", "text": "Green and magenta.", "annotations": []}]}],
              "usage": {"input_tokens": 50, "output_tokens": 4,
                        "input_tokens_details": {"cached_tokens": 32}}})
    assert get_wire(wire).decode(done) == ChatResponse(
        text="Green and magenta.", tool_calls=[],
        usage=Usage(input_tokens=50, output_tokens=4, cache_read_tokens=32),
        stop_reason="end_turn", raw_model="m")
    cut = J({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
             "model": "m", "output": []})
    assert get_wire(wire).decode(cut).stop_reason == "max_tokens"


@pytest.mark.parametrize("wire", WIRES)
def test_a_body_of_the_wrong_shape_is_garbage(wire: str) -> None:
    with pytest.raises(WireGarbage):
        get_wire(wire).decode(b'{"candidates": "nope", "choices": 1, "content": 2, "output": 3}')
    with pytest.raises(WireGarbage):
        get_wire(wire).decode(b"<html>502 Bad Gateway</html>")


@pytest.mark.parametrize(("wire", "body", "expected"), [
    ("anthropic", {"type": "error", "error": {"type": "invalid_request_error",
                                              "message": "Could not process image"}},
     ("invalid_request_error", "invalid_request_error", "Could not process image", "image")),
    # Gemini's OpenAI-compatible endpoint, for image_url inside a role:"tool" message
    ("openai-compat", {"error": {"message": "Invalid content part type: image_url",
                                 "type": "invalid_request_error", "param": None, "code": None}},
     ("invalid_request_error", "invalid_request_error", "Invalid content part type: image_url",
      "placement")),
    ("gemini", {"error": {"code": 400, "message": "Unable to process input image.",
                          "status": "INVALID_ARGUMENT"}},
     ("INVALID_ARGUMENT", "INVALID_ARGUMENT", "Unable to process input image.", "image")),
    ("xai-responses", {"code": "Client specified an invalid argument",
                       "error": "Unrecognized request argument: foo"},
     ("", "Client specified an invalid argument", "Unrecognized request argument: foo",
      "parameter")),
    ("perplexity-responses", {"error": {"message": "invalid request",
                                        "type": "invalid_request_error", "code": "invalid_request"}},
     ("invalid_request_error", "invalid_request", "invalid request", "other")),
])
def test_400_bodies_of_each_provider_are_parsed(wire: str, body: dict, expected: tuple) -> None:
    error = get_wire(wire).classify(400, J(body))
    assert isinstance(error, WireRejected)
    assert (error.error_type, error.code, error.message, error.refusal) == expected
    assert error.error_class == "client_error"


def test_413_about_image_size_is_an_image_refusal_and_429_5xx_are_retryable() -> None:
    classify = get_wire("anthropic").classify
    too_big = classify(413, J({"type": "error", "error": {"type": "request_too_large",
                                                          "message": "image exceeds 5 MB maximum"}}))
    assert isinstance(too_big, WireRejected) and too_big.refusal == "image"
    plain = classify(413, J({"type": "error", "error": {"type": "request_too_large",
                                                        "message": "Request exceeds the maximum size"}}))
    assert isinstance(plain, WireRejected) and plain.refusal == "other"
    assert isinstance(classify(429, b"{}"), WireRetryable)
    assert isinstance(classify(529, b""), WireRetryable)
    assert classify(529, b"").error_class == "server_error"
    assert not classify(401, b"{}").images_rejected  # type: ignore[attr-defined]
