"""The contenders and the one piece of work they all do.

A warm turn: the request below; the simulated model calls the demo camera (an MCP server over
stdio, one process per contender, started once and kept warm); the frame goes back to the model,
which answers by naming the frame's colours — so an answer that names them shows the image
reached the model. Every contender is set up as its documentation shows, with the options a user
who cares about speed would pick where the framework has them (a cached tool list, no tracing
export), and sends a key as the providers' SDKs require one.

Each runner imports its library only in `start`: the worker process that runs it imports nothing
of the others, and the orchestrator imports none of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol

REQUEST = "Take a picture with the camera and describe it."
MODEL = "sim-camera-1"
KEY = "sim-key"
MAX_TOKENS = 1024
CAMERA = [sys.executable, "-m", "fuseforks.demo.camera"]
ANTHROPIC_PREFIX = "/anthropic"
RESPONSES_PREFIX = "/openai/v1"


class Runner(Protocol):
    async def start(self, stack: AsyncExitStack) -> None:
        """Start the clients and the camera; `stack` closes them."""

    async def turn(self) -> str:
        """One warm turn; its final answer."""


@dataclass(frozen=True)
class Settings:
    """What a runner is told by the orchestrator."""

    base_url: str  # the simulator's, without a wire's prefix
    db: str = ""  # fuseforks: an SQLite path or a PostgreSQL URL
    one_conversation: bool = False  # fuseforks: every turn in one conversation


@dataclass(frozen=True)
class Contender:
    name: str
    label: str
    wire: str  # "anthropic" or "openai-responses": what fuseforks row it is compared with
    kind: str  # "floor", "fuseforks" or "peer"
    make: Callable[[Contender, Settings], Runner]
    imports: str  # the import statements a user of it writes (timed in a fresh process)
    store: str = ""
    env: dict[str, str] = field(default_factory=dict)

    def runner(self, settings: Settings) -> Runner:
        return self.make(self, settings)


class Floor:
    """No framework: the two Messages requests with plain httpx (JSON bodies built by hand, the
    image in the `tool_result`), the tool call with the `mcp` SDK's `ClientSession`."""

    def __init__(self, contender: Contender, settings: Settings) -> None:
        self.url = settings.base_url + ANTHROPIC_PREFIX
        self.tools: list[dict[str, Any]] = []

    async def start(self, stack: AsyncExitStack) -> None:
        import httpx
        from mcp import ClientSession, StdioServerParameters, stdio_client

        self.http = await stack.enter_async_context(httpx.AsyncClient(
            base_url=self.url, timeout=60,
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"}))
        read, write = await stack.enter_async_context(
            stdio_client(StdioServerParameters(command=CAMERA[0], args=CAMERA[1:])))
        self.session = await stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        listed = await self.session.list_tools()
        self.tools = [{"name": t.name, "description": t.description or "",
                       "input_schema": t.input_schema} for t in listed.tools]

    async def ask(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        response = await self.http.post("/v1/messages", json={
            "model": MODEL, "max_tokens": MAX_TOKENS, "messages": messages, "tools": self.tools})
        response.raise_for_status()
        content: list[dict[str, Any]] = response.json()["content"]
        return content

    async def turn(self) -> str:
        from mcp.types import CallToolResult

        messages: list[dict[str, Any]] = [{"role": "user", "content": REQUEST}]
        first = await self.ask(messages)
        results = []
        for call in (block for block in first if block["type"] == "tool_use"):
            result = await self.session.call_tool(call["name"], call["input"])
            assert isinstance(result, CallToolResult)
            results.append({"type": "tool_result", "tool_use_id": call["id"],
                            "content": [anthropic_block(b) for b in result.content]})
        messages += [{"role": "assistant", "content": first},
                     {"role": "user", "content": results}]
        return "".join(b["text"] for b in await self.ask(messages) if b["type"] == "text")


def anthropic_block(block: Any) -> dict[str, Any]:
    if block.type == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type,
                                            "data": block.data}}
    return {"type": "text", "text": block.text}


class Fuseforks:
    """`Agent` as the README shows it: write-ahead into its store, no log file."""

    def __init__(self, contender: Contender, settings: Settings) -> None:
        prefix = ANTHROPIC_PREFIX if contender.wire == "anthropic" else RESPONSES_PREFIX
        self.contender, self.settings = contender, settings
        self.url = settings.base_url + prefix
        self.conversation: str | None = None

    async def start(self, stack: AsyncExitStack) -> None:
        from fuseforks import Agent

        self.agent = await stack.enter_async_context(Agent(
            wire=self.contender.wire, model=MODEL, base_url=self.url, api_key=KEY,
            mcp={"mcpServers": {"cam": {"command": CAMERA[0], "args": CAMERA[1:]}}},
            db=self.settings.db, log=None))
        if self.agent.start_faults:
            raise RuntimeError(f"the camera did not start: {self.agent.start_faults}")
        if self.settings.one_conversation:
            self.conversation = self.agent.conversation().id

    async def turn(self) -> str:
        result = await self.agent.run(REQUEST, conversation=self.conversation)
        if not result.ok:
            raise RuntimeError(f"turn ended {result.stop}: {result.error}")
        return result.answer


class PydanticAI:
    """pydantic-ai's `Agent` with its Anthropic model and an `MCPToolset` over stdio (its tool
    list cached, the default); the agent is entered once so the toolset stays connected."""

    def __init__(self, contender: Contender, settings: Settings) -> None:
        self.url = settings.base_url + ANTHROPIC_PREFIX

    async def start(self, stack: AsyncExitStack) -> None:
        from fastmcp.client.transports import StdioTransport
        from pydantic_ai import Agent
        from pydantic_ai.mcp import MCPToolset
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        toolset = MCPToolset(StdioTransport(command=CAMERA[0], args=CAMERA[1:]), id="cam")
        model = AnthropicModel(MODEL, provider=AnthropicProvider(api_key=KEY, base_url=self.url))
        self.agent = await stack.enter_async_context(Agent(model, toolsets=[toolset]))

    async def turn(self) -> str:
        result = await self.agent.run(REQUEST)
        return str(result.output)


class OpenAIAgents:
    """openai-agents' `Runner` with its Responses model and `MCPServerStdio` (tool list cached;
    tracing off, since its exporter would send traces to OpenAI)."""

    def __init__(self, contender: Contender, settings: Settings) -> None:
        self.url = settings.base_url + RESPONSES_PREFIX

    async def start(self, stack: AsyncExitStack) -> None:
        from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled
        from agents.mcp import MCPServerStdio
        from openai import AsyncOpenAI

        set_tracing_disabled(True)
        server = await stack.enter_async_context(MCPServerStdio(
            params={"command": CAMERA[0], "args": CAMERA[1:]}, cache_tools_list=True, name="cam"))
        client = AsyncOpenAI(api_key=KEY, base_url=self.url)
        stack.push_async_callback(client.close)
        self.agent = Agent(name="bench", mcp_servers=[server],
                           model=OpenAIResponsesModel(model=MODEL, openai_client=client))
        self.runner = Runner

    async def turn(self) -> str:
        result = await self.runner.run(self.agent, REQUEST)
        return str(result.final_output)


class LiteLLM:
    """LiteLLM has no agent loop: `acompletion` on its Anthropic route and its MCP bridge
    (`litellm.mcp_client`: the tool list in OpenAI's shape, a tool call run through an `mcp`
    `ClientSession`). The loop and the mapping of the MCP result to a tool message (text and an
    `image_url` data URL, which LiteLLM turns into Anthropic's `tool_result` image) are the
    caller's, as its documentation shows."""

    def __init__(self, contender: Contender, settings: Settings) -> None:
        self.url = settings.base_url + ANTHROPIC_PREFIX

    async def start(self, stack: AsyncExitStack) -> None:
        import litellm
        from litellm.mcp_client import call_openai_tool, load_mcp_tools
        from mcp import ClientSession, StdioServerParameters, stdio_client

        litellm.suppress_debug_info = True  # else it prints its provider list for every call
        self.litellm, self.call_openai_tool = litellm, call_openai_tool
        read, write = await stack.enter_async_context(
            stdio_client(StdioServerParameters(command=CAMERA[0], args=CAMERA[1:])))
        self.session = await stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        self.tools = await load_mcp_tools(self.session, format="openai")

    async def ask(self, messages: list[dict[str, Any]]) -> Any:
        response = await self.litellm.acompletion(
            model=f"anthropic/{MODEL}", api_base=self.url, api_key=KEY, messages=messages,
            tools=self.tools, max_tokens=MAX_TOKENS)
        return response.choices[0].message

    async def turn(self) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": REQUEST}]
        first = await self.ask(messages)
        messages.append(first.model_dump(exclude_none=True))
        for call in first.tool_calls or []:
            result = await self.call_openai_tool(self.session, call)
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": [openai_part(b) for b in result.content]})
        return str((await self.ask(messages)).content)


def openai_part(block: Any) -> dict[str, Any]:
    if block.type == "image":
        return {"type": "image_url",
                "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}
    return {"type": "text", "text": block.text}


FUSEFORKS_IMPORTS = "from fuseforks import Agent"
CONTENDERS: dict[str, Contender] = {c.name: c for c in [
    Contender("floor", "floor: httpx + mcp ClientSession", "anthropic", "floor", Floor,
              "import httpx\nfrom mcp import ClientSession, StdioServerParameters, stdio_client"),
    Contender("fuseforks", "fuseforks Agent, SQLite", "anthropic", "fuseforks", Fuseforks,
              FUSEFORKS_IMPORTS, store="sqlite"),
    Contender("fuseforks-pg", "fuseforks Agent, PostgreSQL", "anthropic", "fuseforks", Fuseforks,
              FUSEFORKS_IMPORTS + "\nimport fuseforks.stores.postgres", store="postgres"),
    Contender("fuseforks-responses", "fuseforks Agent, SQLite", "openai-responses", "fuseforks", Fuseforks,
              FUSEFORKS_IMPORTS, store="sqlite"),
    Contender("pydantic-ai", "pydantic-ai Agent", "anthropic", "peer", PydanticAI,
              "from fastmcp.client.transports import StdioTransport\n"
              "from pydantic_ai import Agent\nfrom pydantic_ai.mcp import MCPToolset\n"
              "from pydantic_ai.models.anthropic import AnthropicModel\n"
              "from pydantic_ai.providers.anthropic import AnthropicProvider"),
    Contender("openai-agents", "openai-agents Runner", "openai-responses", "peer",
              OpenAIAgents,
              "from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled\n"
              "from agents.mcp import MCPServerStdio\nfrom openai import AsyncOpenAI"),
    Contender("litellm", "LiteLLM acompletion + MCP bridge", "anthropic", "peer", LiteLLM,
              "import litellm\nfrom litellm.mcp_client import call_openai_tool, load_mcp_tools\n"
              "from mcp import ClientSession, StdioServerParameters, stdio_client",
              # its model price list comes with it; without this it fetches one at import
              env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"}),
]}
"""In the order of the tables: the floor, fuseforks' rows, the peers."""

FUSEFORKS_OF_WIRE = {"anthropic": "fuseforks", "openai-responses": "fuseforks-responses"}
"""The fuseforks row a contender on each wire is compared with."""
