"""Request parameters per wire and model family, as data the encoders read.

Which parameter carries `ChatRequest.max_tokens`, what is sent when the request leaves it None,
and which parameters a family refuses (left out of the body rather than refused by the provider).
A family is a model-name pattern; the first that matches wins, the wire's default applies
otherwise. No encoder asks for a model by name.

OpenAI's reasoning families — the o-series (`o1`, `o3`, `o4-mini`, …) and the GPT-5 family
(`gpt-5`, `gpt-5.5-mini`, …) — refuse `max_tokens` ("Use 'max_completion_tokens' instead") and
`temperature` on Chat Completions; on the Responses API the limit is `max_output_tokens` for every
model and only `temperature` is refused. `OPENAI_REASONING` matches the start of a model name: `o`
and a digit, or `gpt-5`. A provider-prefixed name (`openai/gpt-5` on a gateway) does not match: a
gateway takes the parameters of its own API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ModelParameters:
    """The parameters one model family takes."""

    max_tokens: str
    """The name of the parameter that carries the output-token limit."""
    default_max_tokens: int | None = None
    """Sent when the request says None; None: then nothing is sent."""
    refuses: frozenset[str] = frozenset()
    """Parameters this family refuses: never sent."""

    def limit(self, requested: int | None) -> int | None:
        """The output-token limit to send, or None to send none."""
        return requested if requested is not None else self.default_max_tokens

    def takes(self, parameter: str) -> bool:
        return parameter not in self.refuses


@dataclass(frozen=True, slots=True)
class ParameterTable:
    """A wire's families, in order, and the parameters of every other model."""

    default: ModelParameters
    families: tuple[tuple[re.Pattern[str], ModelParameters], ...] = field(default=())

    def for_model(self, model: str) -> ModelParameters:
        return next((p for pattern, p in self.families if pattern.match(model)), self.default)


OPENAI_REASONING = re.compile(r"(?:o\d|gpt-5)")
"""OpenAI's reasoning families, matched at the start of the model name."""

# The Messages API requires `max_tokens`; the current API takes no `temperature` (absent from the
# official SDK's MessageCreateParams, which tests/wires/test_sdk_shapes.py validates against).
ANTHROPIC = ParameterTable(default=ModelParameters(
    max_tokens="max_tokens", default_max_tokens=4096, refuses=frozenset({"temperature"})))

OPENAI_CHAT = ParameterTable(
    default=ModelParameters(max_tokens="max_tokens"),
    families=((OPENAI_REASONING, ModelParameters(max_tokens="max_completion_tokens",
                                                 refuses=frozenset({"temperature"}))),),
)

# Inside `generationConfig`.
GEMINI = ParameterTable(default=ModelParameters(max_tokens="maxOutputTokens"))

RESPONSES = ParameterTable(
    default=ModelParameters(max_tokens="max_output_tokens"),
    families=((OPENAI_REASONING, ModelParameters(max_tokens="max_output_tokens",
                                                 refuses=frozenset({"temperature"}))),),
)

# Inside Converse's `inferenceConfig`; Bedrock passes `temperature` on to every family.
BEDROCK = ParameterTable(default=ModelParameters(max_tokens="maxTokens"))
