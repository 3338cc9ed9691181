"""The simulated model: a scripted conversation plus model profiles observed on real providers.

Script: while fewer than `rounds` tool rounds have happened, call the scripted tools (default: the
first declared tool) with the scripted `arguments`; after that, answer about the images of the latest tool round. The model reads
the conversation's meaning, not its last message: while the latest assistant turn is a tool call
(answered by the tool results), the images after it count wherever they sit — inside the tool
results, in a user message after them (the alternate placement), before or after a trailing system
or developer message. Profiles:
`perplexity/deepseek-v4-pro-0813` refuses any request carrying an image with a bare 400 (the
model refuses, whatever the placement); `gpt-oss-120b` answers 200 and ignores images (the case no
fallback can detect); `sim-no-webp` refuses WebP only (for the JPEG fallback).

Profiles of real refusals, each answered with the provider's real error body by the wire module
that owns the shape: Gemini before 3 refuses images inside `functionResponse.parts`
(`gemini.py`); a Responses model refuses images inside `function_call_output` (`responses.py`);
OpenAI's reasoning models refuse `max_tokens` and `temperature` on Chat Completions
(`openai_chat.py`). Each takes images in a user message after the tool results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from fuseforks.simulator.eyes import answer_about, media_type_of

IMAGE_REFUSING_MODELS = frozenset({"perplexity/deepseek-v4-pro-0813"})
IMAGE_IGNORING_MODELS = frozenset({"gpt-oss-120b"})
# An endpoint that takes JPEG but not WebP: what the openai-compat JPEG fallback exists for.
WEBP_REFUSING_MODELS = frozenset({"sim-no-webp"})
# Gemini before 3 (model names starting so): "`function_response.parts` is not supported for this
# model", in the list-wrapped body Gemini answers.
FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES = ("gemini-1.", "gemini-2.")
# A Responses model that takes only a string as a tool output: OpenAI's type refusal of
# `input[N].output`.
TOOL_OUTPUT_IMAGE_REFUSING_MODELS = frozenset({"gpt-4.1-no-tool-images"})
# OpenAI's reasoning models (names starting so) on Chat Completions: no `max_tokens` ("Use
# 'max_completion_tokens' instead"), no `temperature`.
MAX_TOKENS_REFUSING_PREFIXES = ("o1", "o3", "o4", "gpt-5")
# OpenAI's own models on Chat Completions (names starting so) refuse an `image_url` in a
# `role:"tool"` message with OpenAI's body; other models with Gemini's compat-endpoint body.
OPENAI_CHAT_PREFIXES = ("gpt-", "chatgpt-", "o1", "o3", "o4")
IGNORING_ANSWER = "I cannot see any image in the tool result."
NO_TOOLS_ANSWER = "Hello from the fuseforks simulator."


@dataclass(frozen=True, slots=True)
class Script:
    """What the simulated model does; shared by every wire of one simulator."""

    call_tools: tuple[str, ...] = ()  # empty: the first declared tool
    rounds: int = 1
    latency: float = 0.0  # seconds before each answer (a stream's first frame), like a real model
    # The JSON object each called tool gets: a longer one makes a streamed call arrive in pieces.
    arguments: str = "{}"

    def __post_init__(self) -> None:
        try:
            msgspec.json.decode(self.arguments, type=dict[str, Any])
        except msgspec.DecodeError as exc:  # a script error, not a request the provider refuses
            raise ValueError(f"Script.arguments must be a JSON object: {exc}") from None


DEFAULT_SCRIPT = Script()


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a provider module read out of a valid request."""

    model: str
    tools: list[str]
    tool_rounds_done: int
    # The latest assistant turn called tools (so the turn now asked for answers the tool round);
    # `latest_images` are the images sent after that call, wherever they sit.
    answering_tool_round: bool
    latest_images: list[bytes] = field(default_factory=list)
    all_images: list[bytes] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CallTools:
    names: list[str]
    arguments: str = "{}"  # JSON text, as Chat Completions and Responses carry it

    def input(self) -> dict[str, Any]:
        """The arguments as an object, as Anthropic's `input` and Gemini's `args` carry them."""
        return msgspec.json.decode(self.arguments, type=dict[str, Any])


@dataclass(frozen=True, slots=True)
class Answer:
    text: str


@dataclass(frozen=True, slots=True)
class RefuseImages:
    message: str = "invalid request"
    code: str = "invalid_request"


Decision = CallTools | Answer | RefuseImages


def decide(conversation: Conversation, script: Script) -> Decision:
    if conversation.all_images and conversation.model in IMAGE_REFUSING_MODELS:
        return RefuseImages()
    if conversation.model in WEBP_REFUSING_MODELS and any(
        media_type_of(image) == "image/webp" for image in conversation.all_images
    ):
        return RefuseImages(message="Unsupported image format: image/webp", code="invalid_image_format")
    if conversation.tools and conversation.tool_rounds_done < script.rounds and (
        conversation.tool_rounds_done == 0 or conversation.answering_tool_round
    ):
        names = [n for n in script.call_tools if n in conversation.tools] or conversation.tools[:1]
        return CallTools(names, script.arguments)
    if not conversation.answering_tool_round:
        return Answer(NO_TOOLS_ANSWER)
    if conversation.model in IMAGE_IGNORING_MODELS and conversation.latest_images:
        return Answer(IGNORING_ANSWER)
    return Answer(answer_about(conversation.latest_images))
