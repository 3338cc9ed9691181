"""The demo's scenarios: one camera turn on each of the seven wires, a model that refuses images
wherever they are (400 → alternate placement → 400 → strip → resend once), and a model that
refuses them inside a tool result but takes them in a user-role message (the placement ladder). Model names are ones the providers served when the image
rules were measured."""

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
)

REQUEST: dict[Language, str] = {
    "en": "Take one live view with the camera and describe what it shows in one sentence.",
    "ja": "NIK のライブビューを 1 枚撮って、写っているものを 1 文で説明して",
    "zh": "用相机拍一张实时画面，并用一句话描述画面内容。",
}
