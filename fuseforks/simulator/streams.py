"""Streamed answers: each wire's complete answer re-told as the event sequence its real service
streams, so what a client puts together from the stream is the non-streamed answer, exactly.

Text goes out a few words per delta and tool-call arguments a few characters per delta, so a
client sees real increments. The sequences follow the official SDKs' stream readers (anthropic's
`MessageStream`, openai's `ChatCompletionStream` and `ResponseStream`, google-genai's SSE reader).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from fuseforks.simulator.shapes import JSON, Streamed

WORDS_PER_DELTA = 3
CHARS_PER_JSON_DELTA = 8
_WORD = re.compile(r"\s*\S+\s*|\s+")


def text_pieces(text: str) -> list[str]:
    """`text` in pieces of a few words (spaces kept), joining back to `text`."""
    words = _WORD.findall(text)
    return ["".join(words[n:n + WORDS_PER_DELTA]) for n in range(0, len(words), WORDS_PER_DELTA)]


def json_pieces(text: str) -> list[str]:
    """JSON text in pieces cut anywhere, as models stream tool arguments."""
    return [text[n:n + CHARS_PER_JSON_DELTA] for n in range(0, len(text), CHARS_PER_JSON_DELTA)]


def sse(data: object, event: str | None = None, *, end: bytes = b"\n\n") -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + JSON.encode(data) + end


def anthropic(message: dict[str, Any]) -> Streamed:
    """message_start, per block (content_block_start, ping after the first, deltas,
    content_block_stop), message_delta (stop_reason, output_tokens), message_stop."""
    usage = message["usage"]
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **message, "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {**usage, "output_tokens": 1}}}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in text_pieces(block["text"])]
        else:
            opened = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p}
                      for p in json_pieces(JSON.encode(block["input"]).decode())]
        events.append({"type": "content_block_start", "index": index, "content_block": opened})
        if index == 0:
            events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {
        "stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
        "usage": {"output_tokens": usage["output_tokens"]}})
    events.append({"type": "message_stop"})
    return Streamed([sse(event, event["type"]) for event in events])


def chat(completion: dict[str, Any], *, include_usage: bool) -> Streamed:
    """`chat.completion.chunk`s: the role first (with the first tool call's id and name), the
    content or argument deltas, a chunk with `finish_reason`, the usage chunk when asked
    (`choices: []`; every other chunk then says `usage: null`), and `[DONE]`."""
    head = {"id": completion["id"], "object": "chat.completion.chunk",
            "created": completion["created"], "model": completion["model"]}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        out = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                    "finish_reason": finish}]}
        return {**out, "usage": None} if include_usage else out

    chunks: list[dict[str, Any]] = []
    for n, call in enumerate(message.get("tool_calls") or []):
        opened = {"index": n, "id": call["id"], "type": "function",
                  "function": {"name": call["function"]["name"], "arguments": ""}}
        role = {"role": "assistant", "content": None, "refusal": None} if n == 0 else {}
        chunks.append(chunk({**role, "tool_calls": [opened]}))
        chunks += [chunk({"tool_calls": [{"index": n, "function": {"arguments": p}}]})
                   for p in json_pieces(call["function"]["arguments"])]
    if not chunks:
        chunks.append(chunk({"role": "assistant", "content": "", "refusal": None}))
        chunks += [chunk({"content": p}) for p in text_pieces(message.get("content") or "")]
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return Streamed([*(sse(c) for c in chunks), b"data: [DONE]\n\n"])


def responses(response: dict[str, Any]) -> Streamed:
    """response.created, response.in_progress, each output item (added, its parts or argument
    deltas, done), response.completed carrying the whole response; numbered by
    `sequence_number`."""
    numbers = itertools.count()
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": next(numbers), **fields})

    opened = {**response, "status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=opened)
    emit("response.in_progress", response=opened)
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "content": []})
            for content_index, part in enumerate(item["content"]):
                at = {"item_id": item["id"], "output_index": index, "content_index": content_index}
                emit("response.content_part.added", **at, part={**part, "text": ""})
                for piece in text_pieces(part["text"]):
                    emit("response.output_text.delta", **at, delta=piece, logprobs=[])
                emit("response.output_text.done", **at, text=part["text"], logprobs=[])
                emit("response.content_part.done", **at, part=part)
        else:
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "arguments": ""})
            at = {"item_id": item["id"], "output_index": index}
            for piece in json_pieces(item["arguments"]):
                emit("response.function_call_arguments.delta", **at, delta=piece)
            emit("response.function_call_arguments.done", **at, name=item["name"],
                 arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=response)
    return Streamed([sse(event, event["type"]) for event in events])


def gemini(response: dict[str, Any], *, as_sse: bool) -> Streamed:
    """`GenerateContentResponse` chunks: text a few words per chunk, function calls whole in one
    chunk, `finishReason` and `usageMetadata` on the last. With `alt=sse` each is a `data:` frame;
    without, the chunks are the elements of one JSON array, sent in pieces."""
    candidate = response["candidates"][0]
    groups: list[list[dict[str, Any]]] = []
    for part in candidate["content"]["parts"]:
        if "text" in part:
            groups += [[{**part, "text": p}] for p in text_pieces(part["text"]) or [""]]
        elif groups and "text" not in groups[-1][-1]:
            groups[-1].append(part)
        else:
            groups.append([part])
    chunks = [{"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
               "modelVersion": response["modelVersion"]} for parts in groups or [[]]]
    chunks[-1]["candidates"][0]["finishReason"] = candidate["finishReason"]
    chunks[-1]["usageMetadata"] = response["usageMetadata"]
    if as_sse:
        return Streamed([sse(c, end=b"\r\n\r\n") for c in chunks])
    frames = [b"[" + JSON.encode(chunks[0])]
    frames += [b",\r\n" + JSON.encode(c) for c in chunks[1:]]
    return Streamed([*frames, b"]"], content_type="application/json; charset=UTF-8")
