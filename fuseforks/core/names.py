"""The closed sets of names the project reasons with, as literals a type checker holds us to.

A language, a wire, a placement, a stop reason or a drop reason is never a free string: an event
field, a function parameter and a CLI option all take one of these, and `parse_*` turns user input
into one with an error that lists the choices.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

from fuseforks.core.errors import UnknownName

Language = Literal["ja", "en", "zh"]
"""The village language: the language of every sentence fuseforks adds to what the model reads."""

WireName = Literal[
    "anthropic",
    "openai-compat",
    "gemini",
    "openai-responses",
    "xai-responses",
    "meta-responses",
    "perplexity-responses",
    "bedrock-converse",
    "vertex-gemini",
    "vertex-anthropic",
    "azure-chat",
    "azure-responses",
    "ollama",
    "vllm",
    "llamacpp",
    "lmstudio",
]
"""A provider request format at a provider; also the `backend=` value of the log. The clouds'
wires speak a format of their own (Bedrock's Converse) or one of the first seven at the cloud's
address with the cloud's credentials; the four local servers speak openai-compat at their own
default address, without a key. Names added within schema version 4, as new kinds are: no earlier
record holds one."""

Placement = Literal["native", "alternate"]
"""Native: a tool result's images sit inside the tool result. Alternate: a user-role message right
after the tool results carries them, with a caption."""

DropReason = Literal["unreadable", "unsupported_format", "too_large", "too_many"]
ImagePath = Literal["pass_through", "re_encoded"]
ReadOutcome = Literal["read", "too_large", "timeout", "failed"]
"""How reading a linked resource (`resources/read`) ended."""
RequestPurpose = Literal["round", "resend", "summary"]
FallbackOutcome = Literal["ok", "failed"]

RefusalKind = Literal["image", "placement", "parameter", "other"]
"""Why a provider refused a request. `image`: the images could not be processed. `placement`:
images are not accepted where they were put (inside a tool result). `parameter`: a parameter, the
model or the request's shape. `other`: nothing more specific (an unexplained refusal)."""

LearnedOutcome = Literal["received", "refused"]

StopReason = Literal["answered", "tool_limit", "repeat", "error", "interrupted"]
"""Why a turn ended. `answered`: the model answered without asking for a tool. `interrupted`: a
signal or the caller stopped it (what was in flight is recorded just before)."""

InterruptCause = Literal["SIGINT", "SIGTERM", "cancelled"]
"""What stopped a turn from outside: a signal to the process, or the caller cancelling its task."""
InFlight = Literal["request", "tools"]
"""The side effect a turn was waiting on when it was interrupted."""

GatewayTransport = Literal["stdio", "http"]
"""How an MCP client reaches the gateway: it launched it (stdio), or over streamable HTTP."""
McpMethod = Literal["tools/call", "resources/read", "prompts/get"]
"""The requests of a gateway client whose answers carry content (images among it): each is
recorded like a tool call and goes through the plan of an MCP result."""
SessionEndCause = Literal["closed", "SIGINT", "SIGTERM", "cancelled"]
"""Why a gateway session ended. `closed`: the client ended it (stdin closed, the HTTP session
deleted). A signal or `cancelled`: the gateway stopped while the client was still there."""

LANGUAGES: tuple[Language, ...] = get_args(Language)
WIRE_NAMES: tuple[WireName, ...] = get_args(WireName)
STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)
SESSION_END_CAUSES: tuple[SessionEndCause, ...] = get_args(SessionEndCause)
DROP_REASONS: tuple[DropReason, ...] = get_args(DropReason)

DEFAULT_MAX_ROUNDS = 8
"""Tool rounds a turn may run before the closing summary call."""
DEFAULT_IMAGE_CAP = 20
"""Tool images one request may carry; older ones are taken off first."""
REPEAT_LIMIT = 3
"""The same tool-result identity this many times stops the loop."""

_T = TypeVar("_T", bound=str)


def _parse(value: str, choices: tuple[_T, ...], what: str) -> _T:
    for choice in choices:
        if value == choice:
            return choice
    raise UnknownName(f"unknown {what} {value!r}; known: {', '.join(choices)}")


def parse_language(value: str) -> Language:
    return _parse(value, LANGUAGES, "village language")


def parse_wire(value: str) -> WireName:
    return _parse(value, WIRE_NAMES, "wire")
