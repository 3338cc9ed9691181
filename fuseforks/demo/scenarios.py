"""The demo's scenarios: one camera turn on each of the seven wires, a model that refuses images
wherever they are (400 → alternate placement → 400 → strip → resend once), and a model that
refuses them inside a tool result but takes them in a user-role message (the placement ladder);
then one turn on each cloud's wire (Bedrock with a family that climbs the ladder too) and on each
local server by name. Model names are ones the providers served when the image rules were
measured."""

from __future__ import annotations

from typing import Literal

import msgspec

from fuseforks.core.names import Language, WireName

Expectation = Literal["delivered", "ladder", "stripped"]


class Scenario(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    wire: WireName
    model: str
    expect: Expectation = "delivered"
    """`delivered`: the image reaches the model where the wire puts it. `ladder`: the model
    refuses it inside the tool result and takes it in a user-role message after it. `stripped`:
    the model refuses images wherever they are; the turn goes on without them."""


DEMO_SCENARIOS: tuple[Scenario, ...] = (
    Scenario(name="meta", wire="meta-responses", model="muse-spark-latest"),
    Scenario(name="anthropic", wire="anthropic", model="claude-sonnet-5-5"),
    Scenario(name="gemini", wire="gemini", model="gemini-3.8-flash"),
    Scenario(name="openai-responses", wire="openai-responses", model="gpt-6-sol"),
    Scenario(name="openai-compat", wire="openai-compat", model="gemini-3.5-flash-lite"),
    Scenario(name="xai", wire="xai-responses", model="grok-4.7"),
    Scenario(name="perplexity", wire="perplexity-responses", model="google/gemini-3.7-flash"),
    Scenario(name="image-refusing", wire="perplexity-responses",
             model="perplexity/deepseek-v4-pro-0813", expect="stripped"),
    Scenario(name="gemini-2.5", wire="gemini", model="gemini-2.5-flash", expect="ladder"),
    # The clouds: Bedrock's Converse, Vertex AI's Gemini and Claude, Azure OpenAI.
    Scenario(name="bedrock", wire="bedrock-converse",
             model="us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    Scenario(name="bedrock-pixtral", wire="bedrock-converse",
             model="mistral.pixtral-large-2502-v1:0", expect="ladder"),
    Scenario(name="vertex-gemini", wire="vertex-gemini", model="gemini-3.8-flash"),
    Scenario(name="vertex-claude", wire="vertex-anthropic", model="claude-sonnet-5-5"),
    Scenario(name="azure-chat", wire="azure-chat", model="gpt-5.5"),
    Scenario(name="azure-responses", wire="azure-responses", model="gpt-5.5"),
    # Servers on this machine, by name, without a key: the image goes by carrier.
    Scenario(name="ollama", wire="ollama", model="qwen2.5vl:7b"),
    Scenario(name="vllm", wire="vllm", model="Qwen/Qwen2.5-VL-7B-Instruct"),
    Scenario(name="llamacpp", wire="llamacpp", model="gemma-3-4b-it"),
    Scenario(name="lmstudio", wire="lmstudio", model="qwen2.5-vl-7b-instruct"),
)

REQUEST: dict[Language, str] = {
    "en": "Take one live view with the camera and describe what it shows in one sentence.",
    "ja": "NIK のライブビューを 1 枚撮って、写っているものを 1 文で説明して",
    "zh": "用相机拍一张实时画面，并用一句话描述画面内容。",
}
