"""End to end over real loopback HTTP: ProviderClient ↔ the provider simulator, all seven wires."""

from __future__ import annotations

import msgspec
import pytest

from fuseforks.core.canonical import AssistantMessage, ChatRequest, ToolResultMessage, UserMessage
from fuseforks.images.vault import ImageVault
from fuseforks.simulator import Script, run_simulator
from fuseforks.wires import WIRES, Endpoint
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import TOOLS, caption, two_colour, two_colour_jpeg

FAST = RetryPolicy(max_attempts=5, base_delay=0.001, max_delay=0.01)
SEEN_GREEN_MAGENTA = "I see 1 image. image 1: left half green, right half magenta."


async def two_rounds(client: ProviderClient, vault: ImageVault, images: list[list[bytes]],
                     media_type: str = "image/jpeg", model: str = "sim-vision-1") -> tuple[str, ChatRequest]:
    """Round 1: the model calls tools. Round 2: each call's result carries `images[i]`."""
    messages: list = [UserMessage(text="Take a photo and tell me what you see.")]
    first = await client.chat(ChatRequest(model=model, messages=messages, tools=TOOLS), vault)
    assert first.stop_reason == "tool_use"
    messages.append(AssistantMessage(text=first.text, tool_calls=first.tool_calls))
    for call, datas in zip(first.tool_calls, images, strict=True):
        refs = [vault.put(d, media_type) for d in datas]
        messages.append(ToolResultMessage(tool_call_id=call.id, name=call.name, text='{"ok":true}',
                                          images=refs, caption=caption(call.name, len(refs))))
    request = ChatRequest(model=model, messages=messages, tools=TOOLS)
    second = await client.chat(request, vault)
    assert second.stop_reason == "end_turn"
    return second.text, request


@pytest.mark.parametrize("wire", WIRES)
async def test_two_colour_image_reaches_the_simulators_eyes(wire: str) -> None:
    async with (
        run_simulator(any_model=True) as sim,
        ProviderClient(wire, Endpoint(sim.base_urls[wire], "test-key")) as client,
    ):
        answer, _ = await two_rounds(client, ImageVault(), [[two_colour_jpeg()]])
    assert answer == SEEN_GREEN_MAGENTA
    assert [r.status for r in sim.received] == [200, 200]


@pytest.mark.parametrize("wire", ["anthropic", "gemini", "openai-responses"])
async def test_webp_images_are_seen_natively(wire: str) -> None:
    async with (
        run_simulator(any_model=True) as sim,
        ProviderClient(wire, Endpoint(sim.base_urls[wire], "test-key")) as client,
    ):
        answer, _ = await two_rounds(client, ImageVault(), [[two_colour("WEBP")]], "image/webp")
    assert answer == SEEN_GREEN_MAGENTA


async def test_openai_compat_carrier_after_two_consecutive_tool_results_is_seen() -> None:
    script = Script(call_tools=("camera_snapshot", "camera_status"))
    async with run_simulator(script=script, any_model=True) as sim:
        url = sim.base_urls["openai-compat"]
        async with ProviderClient("openai-compat", Endpoint(url, "test-key")) as client:
            answer, _ = await two_rounds(client, ImageVault(), [
                [two_colour_jpeg()], [two_colour_jpeg((255, 0, 0), (0, 0, 255))]])
    assert answer == ("I see 2 images. image 1: left half green, right half magenta; "
                      "image 2: left half red, right half blue.")
    body = msgspec.json.decode(sim.received[-1].body)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "tool", "user"]
    assert [p["type"] for p in body["messages"][-1]["content"]] == [
        "text", "image_url", "text", "image_url"]


async def test_one_connection_is_reused_across_calls() -> None:
    async with (
        run_simulator(any_model=True) as sim,
        ProviderClient("anthropic", Endpoint(sim.base_urls["anthropic"], "k")) as client,
    ):
        await two_rounds(client, ImageVault(), [[two_colour_jpeg()]])
        await two_rounds(client, ImageVault(), [[two_colour_jpeg()]])
    assert len(sim.received) == 4
    assert sim.connections == 1


async def test_image_ignoring_model_answers_200_without_seeing() -> None:
    async with run_simulator() as sim:
        url = sim.base_urls["openai-compat"]
        async with ProviderClient("openai-compat", Endpoint(url, "k")) as client:
            answer, _ = await two_rounds(client, ImageVault(), [[two_colour_jpeg()]],
                                         model="gpt-oss-120b")
    assert answer == "I cannot see any image in the tool result."
