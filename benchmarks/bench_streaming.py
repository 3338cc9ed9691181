"""Time to first token: fuseforks' streaming HTTP edge against the official SDKs, on one stream.

The provider simulator runs as its own process on 127.0.0.1 (as `fuseforks simulator` does) and
streams the same answer to every contender. Each contender keeps one client (one connection) and
asks the same one-message question; the clock runs from the call to the first piece of answer
text handed to the caller:

- fuseforks: `ProviderClient.chat(request, vault, on_text=...)` — encoding, the HTTP edge,
  `httpx-sse` and the wire's accumulator, to the first `on_text`;
- anthropic: `AsyncAnthropic().messages.create(stream=True)` to the first `text_delta` event;
- openai: `AsyncOpenAI().chat.completions.create(stream=True)` to the first chunk with content,
  and `responses.create(stream=True)` to the first `response.output_text.delta`.

Contenders alternate call by call so the shared host's load falls on both alike; medians over
`RUNS` calls after `WARMUP`. Goal: fuseforks' first token no later than the SDK's (ratio ≤ 1.1).
The full streamed answer is timed too.
"""

from __future__ import annotations

import logging
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import anthropic
import anyio
import openai

from fuseforks.core.canonical import ChatRequest, UserMessage
from fuseforks.images.vault import ImageVault
from fuseforks.simulator import WIRE_PREFIXES
from fuseforks.wires import Endpoint
from fuseforks.wires.http import ProviderClient

RUNS = 200
WARMUP = 20
QUESTION = "What is an MCP server? Answer in two sentences."
MODEL = "sim-text-1"

Timed = Callable[[], Awaitable[tuple[float, float]]]
"""One call: seconds to the first text, seconds to the end of the answer."""


def fuseforks_call(client: ProviderClient) -> Timed:
    request = ChatRequest(model=MODEL, messages=[UserMessage(text=QUESTION)])

    async def call() -> tuple[float, float]:
        first: list[float] = []
        started = time.perf_counter()

        def heard(_: str) -> None:
            if not first:
                first.append(time.perf_counter())

        await client.chat(request, ImageVault(), on_text=heard)
        return first[0] - started, time.perf_counter() - started

    return call


def anthropic_call(client: anthropic.AsyncAnthropic) -> Timed:
    async def call() -> tuple[float, float]:
        first = 0.0
        started = time.perf_counter()
        stream = await client.messages.create(
            model=MODEL, max_tokens=4096, stream=True,
            messages=[{"role": "user", "content": QUESTION}])
        async for event in stream:
            if not first and event.type == "content_block_delta" and \
                    event.delta.type == "text_delta":
                first = time.perf_counter()
        return first - started, time.perf_counter() - started

    return call


def openai_chat_call(client: openai.AsyncOpenAI) -> Timed:
    async def call() -> tuple[float, float]:
        first = 0.0
        started = time.perf_counter()
        stream = await client.chat.completions.create(
            model=MODEL, stream=True, stream_options={"include_usage": True},
            messages=[{"role": "user", "content": QUESTION}])
        async for chunk in stream:
            if not first and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter()
        return first - started, time.perf_counter() - started

    return call


def openai_responses_call(client: openai.AsyncOpenAI) -> Timed:
    async def call() -> tuple[float, float]:
        first = 0.0
        started = time.perf_counter()
        stream = await client.responses.create(
            model=MODEL, stream=True, input=[{"role": "user", "content": QUESTION}])
        async for event in stream:
            if not first and event.type == "response.output_text.delta":
                first = time.perf_counter()
        return first - started, time.perf_counter() - started

    return call


async def side_by_side(ours: Timed, theirs: Timed) -> tuple[list[float], list[float],
                                                           list[float], list[float]]:
    ours_first, theirs_first, ours_all, theirs_all = [], [], [], []
    for run in range(WARMUP + RUNS):
        order = (ours, theirs) if run % 2 else (theirs, ours)
        results = {}
        for contender in order:
            results[contender] = await contender()
        if run >= WARMUP:
            ours_first.append(results[ours][0])
            theirs_first.append(results[theirs][0])
            ours_all.append(results[ours][1])
            theirs_all.append(results[theirs][1])
    return ours_first, theirs_first, ours_all, theirs_all


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.2f} ms"


async def run(base_url: str) -> None:
    print(f"time to first token, median of {RUNS} calls (after {WARMUP}), contenders "
          "alternating; simulator in its own process on 127.0.0.1")
    print(f"{'wire':<18}{'SDK':<22}{'fuseforks':>11}{'SDK':>11}{'ratio':>7}"
          f"{'   whole answer: fuseforks':>27}{'SDK':>11}")
    worst = 0.0
    url = {wire: base_url + prefix for wire, prefix in WIRE_PREFIXES.items()}
    contenders = [
        ("anthropic", "anthropic messages",
         lambda: anthropic.AsyncAnthropic(api_key="k", base_url=url["anthropic"], max_retries=0),
         anthropic_call),
        ("openai-compat", "openai chat",
         lambda: openai.AsyncOpenAI(api_key="k", base_url=url["openai-compat"], max_retries=0),
         openai_chat_call),
        ("openai-responses", "openai responses",
         lambda: openai.AsyncOpenAI(api_key="k", base_url=url["openai-responses"],
                                    max_retries=0),
         openai_responses_call),
    ]
    for wire, sdk_name, make_sdk, sdk_call in contenders:
        async with ProviderClient(wire, Endpoint(url[wire], "k")) as ours, make_sdk() as theirs:
            ours_first, theirs_first, ours_all, theirs_all = await side_by_side(
                fuseforks_call(ours), sdk_call(theirs))
        ratio = statistics.median(ours_first) / statistics.median(theirs_first)
        worst = max(worst, ratio)
        print(f"{wire:<18}{sdk_name:<22}{ms(ours_first):>11}{ms(theirs_first):>11}"
              f"{ratio:>6.2f}x{ms(ours_all):>27}{ms(theirs_all):>11}")
    print(f"worst ratio {worst:.2f}x (goal <= 1.1x): {'met' if worst <= 1.1 else 'MISSED'}")


def main() -> None:
    for name in ("httpx", "httpx2"):  # one INFO line per request otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    process = subprocess.Popen([sys.executable, "-m", "fuseforks", "simulator", "--port", "0",
                                "--any-model"],  # MODEL is a name of its own
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    try:
        first = process.stdout.readline().strip()
        assert first.startswith("simulator: listening on "), first
        anyio.run(run, first.removeprefix("simulator: listening on "))
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


if __name__ == "__main__":
    main()
