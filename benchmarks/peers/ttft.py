"""Time to first token as an `Agent` user gets it: `agent.stream` against the official SDK's
streaming helper, on the same simulator stream, on the Anthropic, Chat Completions and Responses
wires.

    python -m benchmarks.peers.ttft BASE_URL RUNS WARMUP     (prints one JSON line per wire)

The agent has no tools and its usual SQLite store (write-ahead, `synchronous=NORMAL`): the clock
runs from `agent.stream(...)` to the first `TextDelta`, so the turn's record (`TurnStarted`, the
request written ahead) is inside it, as it is for every `Agent` user. The SDK's clock runs from
`messages.stream(...)` (`chat.completions.stream`, `responses.stream`) to its first text event.
The two alternate call by call. `benchmarks/bench_streaming.py` measures the bare HTTP layer
(`ProviderClient.chat`) instead: what the agent adds on top of it is the difference.
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic
import anyio
import openai

from fuseforks import Agent
from fuseforks.simulator import WIRE_PREFIXES

QUESTION = "What is an MCP server? Answer in two sentences."
MODEL = "sim-text-1"
KEY = "sim-key"

Timed = Callable[[], Awaitable[tuple[float, float]]]
"""One call: seconds to the first text, seconds to the end of the answer."""


def agent_call(agent: Agent) -> Timed:
    async def call() -> tuple[float, float]:
        first = 0.0
        started = time.perf_counter()
        async with agent.stream(QUESTION) as turn:
            async for _ in turn:
                first = first or time.perf_counter()
        if not turn.result.ok:
            raise RuntimeError(f"turn ended {turn.result.stop}: {turn.result.error}")
        return first - started, time.perf_counter() - started

    return call


def sdk_call(wire: str, client: Any) -> Timed:
    """The SDK's own streaming helper for `wire`, to its first text event."""
    async def call() -> tuple[float, float]:
        first = 0.0
        started = time.perf_counter()
        if wire == "anthropic":
            async with client.messages.stream(
                    model=MODEL, max_tokens=1024,
                    messages=[{"role": "user", "content": QUESTION}]) as stream:
                async for _ in stream.text_stream:
                    first = first or time.perf_counter()
        elif wire == "openai-compat":
            async with client.chat.completions.stream(
                    model=MODEL, messages=[{"role": "user", "content": QUESTION}]) as stream:
                async for event in stream:
                    if event.type == "content.delta":
                        first = first or time.perf_counter()
        else:
            async with client.responses.stream(
                    model=MODEL, input=[{"role": "user", "content": QUESTION}]) as stream:
                async for event in stream:
                    if event.type == "response.output_text.delta":
                        first = first or time.perf_counter()
        return first - started, time.perf_counter() - started

    return call


def sdk_client(wire: str, url: str) -> Any:
    if wire == "anthropic":
        return anthropic.AsyncAnthropic(api_key=KEY, base_url=url, max_retries=0)
    return openai.AsyncOpenAI(api_key=KEY, base_url=url, max_retries=0)


async def side_by_side(ours: Timed, theirs: Timed, runs: int,
                       warmup: int) -> dict[str, list[float]]:
    taken: dict[str, list[float]] = {"agent": [], "sdk": [], "agent_all": [], "sdk_all": []}
    for run in range(warmup + runs):
        order = [("agent", ours), ("sdk", theirs)]
        for name, call in order if run % 2 else order[::-1]:
            first, whole = await call()
            if run >= warmup:
                taken[name].append(first)
                taken[name + "_all"].append(whole)
    return taken


async def measure(base_url: str, runs: int, warmup: int) -> None:
    for wire in ("anthropic", "openai-compat", "openai-responses"):
        url = base_url + WIRE_PREFIXES[wire]
        with tempfile.TemporaryDirectory() as folder:
            async with Agent(wire=wire, model=MODEL, base_url=url, api_key=KEY,
                             db=Path(folder) / "ttft.db", log=None) as agent, \
                    sdk_client(wire, url) as client:
                taken = await side_by_side(agent_call(agent), sdk_call(wire, client),
                                           runs, warmup)
        print(json.dumps({"wire": wire, **{name: {"min": min(values),
                                                  "median": statistics.median(values)}
                                           for name, values in taken.items()}}), flush=True)


def main(argv: list[str]) -> None:
    for name in ("httpx", "httpx2"):  # one INFO line per request otherwise
        logging.getLogger(name).setLevel(logging.WARNING)
    anyio.run(measure, argv[0], int(argv[1]), int(argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
