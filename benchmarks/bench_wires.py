"""Building a request that carries 20 images of 2 MB on its 10th round vs copying its body once.

Every round re-sends the turn's images, so the cost that matters is building round N's body when
the vault already holds each image's base64 as a ready JSON fragment. Target: round 10
costs ≤ 3× one copy of the body bytes, on every wire. For contrast, `naive` re-computes base64
and re-encodes every image string on every round, as an encoder without the vault would.
"""

from __future__ import annotations

import base64
import os
import statistics
import time
from collections.abc import Callable
from functools import partial

import msgspec

from fuseforks.core.canonical import (
    AssistantMessage,
    ChatRequest,
    Message,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from fuseforks.images.vault import ImageVault
from fuseforks.wires import WIRES, Endpoint, get_wire

ROUNDS = 10
IMAGES = 20
IMAGE_BYTES = 2 * 1024 * 1024
REPEATS = 5
ENDPOINT = Endpoint(base_url="http://127.0.0.1:9/v1", api_key="bench")
TOOL = ToolSpec(name="camera_snapshot", description="Take a photo.",
                input_schema={"type": "object", "properties": {}})


def conversation(vault: ImageVault, rounds: int) -> ChatRequest:
    """`rounds` tool rounds, two images per round (20 images by round 10)."""
    messages: list[Message] = [UserMessage(text="Watch the camera.")]
    for r in range(1, rounds + 1):
        refs = [vault.put(os.urandom(IMAGE_BYTES), "image/jpeg") for _ in range(IMAGES // ROUNDS)]
        messages.append(AssistantMessage(tool_calls=[ToolCall(id=f"c{r}", name=TOOL.name,
                                                              signature="c2ln")]))
        messages.append(ToolResultMessage(tool_call_id=f"c{r}", name=TOOL.name, text=f'{{"seq":{r}}}',
                                          images=refs, caption=f"({len(refs)} images from {TOOL.name})"))
    return ChatRequest(model="bench", messages=messages, tools=[TOOL])


def best_of(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def naive_encode(request: ChatRequest, vault: ImageVault) -> bytes:
    """Responses-shaped body with base64 recomputed per round (no vault cache)."""
    items: list[dict] = []
    for m in request.messages:
        if isinstance(m, ToolResultMessage):
            items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": [
                {"type": "input_text", "text": m.text},
                *({"type": "input_image", "image_url": "data:image/jpeg;base64,"
                   + base64.b64encode(vault.get(i.digest)).decode()} for i in m.images)]})
    return msgspec.json.encode({"model": request.model, "input": items})


def main() -> None:
    print(f"round {ROUNDS}, {IMAGES} images x {IMAGE_BYTES // 1024} KiB, median of {REPEATS}")
    print(f"{'wire':<22}{'body MB':>9}{'build ms':>10}{'copy ms':>9}{'ratio':>7}")
    worst = 0.0
    for wire_name in WIRES:
        wire = get_wire(wire_name)
        vault = ImageVault()
        request = conversation(vault, ROUNDS)
        for r in range(1, ROUNDS):  # rounds 1..9 were sent before: the turn's caches are warm
            wire.encode(msgspec.structs.replace(request, messages=request.messages[: 1 + 2 * r]),
                        vault, ENDPOINT)
        body = wire.encode(request, vault, ENDPOINT).body
        build = best_of(partial(wire.encode, request, vault, ENDPOINT))
        copy = best_of(partial(bytearray, body))
        worst = max(worst, build / copy)
        print(f"{wire_name:<22}{len(body) / 1e6:>9.1f}{build * 1e3:>10.1f}{copy * 1e3:>9.1f}"
              f"{build / copy:>7.2f}")
        vault.release()
    vault = ImageVault()
    request = conversation(vault, ROUNDS)
    naive_body = naive_encode(request, vault)
    naive = best_of(partial(naive_encode, request, vault))
    copy = best_of(partial(bytearray, naive_body))
    print(f"{'naive (no vault)':<22}{len(naive_body) / 1e6:>9.1f}{naive * 1e3:>10.1f}"
          f"{copy * 1e3:>9.1f}{naive / copy:>7.2f}")
    print(f"worst wire ratio {worst:.2f} (target <= 3.00): {'ok' if worst <= 3 else 'OVER'}")
