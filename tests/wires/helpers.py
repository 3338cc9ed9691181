"""Builders for wire tests: real two-colour images (Pillow) and canonical conversations."""

from __future__ import annotations

import io

from PIL import Image

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    ImageRef,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from fuseforks.images.vault import ImageVault

MODEL_OF = {"anthropic": "claude-sonnet-5-5", "openai-compat": "gemini-3.5-flash-lite",
            "gemini": "gemini-3.8-flash", "openai-responses": "gpt-6-sol",
            "xai-responses": "grok-4.7", "meta-responses": "muse-spark-latest",
            "perplexity-responses": "google/gemini-3.7-flash",
            "bedrock-converse": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "vertex-gemini": "gemini-3.8-flash", "vertex-anthropic": "claude-sonnet-5-5",
            "azure-chat": "gpt-5.5", "azure-responses": "gpt-5.5", "ollama": "qwen2.5vl:7b",
            "vllm": "Qwen/Qwen2.5-VL-7B-Instruct", "llamacpp": "gemma-3-4b-it",
            "lmstudio": "qwen2.5-vl-7b-instruct"}
"""A model the simulator knows on each wire (the demo's), for a request whose model is no matter."""

FORMAT_OF = {"vertex-gemini": "gemini", "vertex-anthropic": "anthropic",
             "azure-chat": "openai-compat", "azure-responses": "openai-responses",
             "ollama": "openai-compat", "vllm": "openai-compat", "llamacpp": "openai-compat",
             "lmstudio": "openai-compat", "xai-responses": "openai-responses",
             "meta-responses": "openai-responses", "perplexity-responses": "openai-responses"}
"""The body format a wire speaks, when it is another wire's (a cloud's or a local server's
address for a format; the Responses wires share one)."""


def form(wire: str) -> str:
    return FORMAT_OF.get(wire, wire)

GREEN = (0, 255, 0)
MAGENTA = (255, 0, 255)
SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}
TOOLS = [
    ToolSpec(name="camera_snapshot", description="Take a photo.", input_schema=SCHEMA),
    ToolSpec(name="camera_status", description="Report camera state.", input_schema=SCHEMA),
]


def two_colour(fmt: str, left: tuple[int, int, int] = GREEN, right: tuple[int, int, int] = MAGENTA,
               size: tuple[int, int] = (128, 96)) -> bytes:
    image = Image.new("RGB", size, left)
    image.paste(right, (size[0] // 2, 0, size[0], size[1]))
    out = io.BytesIO()
    image.save(out, format=fmt, quality=90)
    return out.getvalue()


def two_colour_jpeg(left: tuple[int, int, int] = GREEN, right: tuple[int, int, int] = MAGENTA) -> bytes:
    return two_colour("JPEG", left, right)


def caption(tool: str, count: int) -> str:
    """Stands in for the turn layer's village-language carrier caption."""
    return f"({count} image{'s' if count != 1 else ''} from the result of {tool})"


def tool_round(
    results: list[tuple[str, str, list[ImageRef]]], *, model: str = "sim-vision-1",
    system: str | None = "You are a careful assistant.", signature: str | None = None,
) -> ChatRequest:
    """user → assistant calling each tool → one tool result per call, in order.

    `results` holds (tool name, result text, images) per call; call ids are `call_1`, `call_2`…
    `signature` stands for Gemini's thought signature, which Gemini refuses to go without.
    """
    calls = [ToolCall(id=f"call_{n}", name=name, signature=signature)
             for n, (name, _, _) in enumerate(results, 1)]
    messages: list = [
        UserMessage(text="Take a photo and tell me what you see."),
        AssistantMessage(text="", tool_calls=calls),
    ]
    for call, (name, text, images) in zip(calls, results, strict=False):
        messages.append(ToolResultMessage(
            tool_call_id=call.id, name=name, text=text, images=images,
            caption=caption(name, len(images)) if images else None,
        ))
    return ChatRequest(model=model, messages=messages, tools=TOOLS, system=system, max_tokens=512)


def snapshot_request(vault: ImageVault, images: int = 1, *, model: str = "sim-vision-1") -> ChatRequest:
    refs = [vault.put(two_colour_jpeg(), "image/jpeg") for _ in range(images)]
    return tool_round([("camera_snapshot", '{"width":128,"height":96}', refs)], model=model,
                      signature="c2lnLTE=")
