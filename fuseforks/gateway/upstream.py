"""The upstream servers behind a gateway session, as one client sees them.

A client's tool call goes to the hub, a resource read and a prompt to the servers' catalog; each
answer comes back as the plan of an MCP result made for this client (`plan_for_client`, with the
profile's limits), so the reply and the record render from the same decisions.
"""

from __future__ import annotations

from typing import Any

import msgspec
from mcp.shared.exceptions import MCPError

from fuseforks.core.errors import McpUnavailable
from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.core.names import Language, McpMethod
from fuseforks.engine.session import ProgressListener
from fuseforks.events.types import ToolSpecRecord
from fuseforks.gateway.names import Names, ToolNaming
from fuseforks.gateway.pins import Pins, ToolChange
from fuseforks.mcp.catalog import Catalog, PromptDefinition
from fuseforks.mcp.hub import ToolHub
from fuseforks.mcp.plan import ClientSource
from fuseforks.mcp.reply import ClientOutput, client_output, plan_for_client
from fuseforks.ports.tools import ToolOutput

_json = msgspec.json.Encoder()


def hub_names(hub: ToolHub, naming: ToolNaming, *, withheld: bool = False) -> Names:
    """The names the hub's tools are offered under (`withheld`: the withheld ones too)."""
    return Names(((d.name, d.tool) for d in hub.list_tools(withheld=withheld)), naming)


def offered_specs(hub: ToolHub, naming: ToolNaming, *,
                  withheld: bool = False) -> list[ToolSpecRecord]:
    """The hub's tools as a client is offered them, and as the record holds them; with
    `withheld`, the withheld ones too, as they would be offered."""
    names = hub_names(hub, naming, withheld=withheld)
    return [ToolSpecRecord(name=names.exposed(d.name), description=d.description,
                           input_schema=_json.encode(d.input_schema).decode())
            for d in hub.list_tools(withheld=withheld)]


def hold(hub: ToolHub, pins: Pins, naming: ToolNaming) -> list[ToolChange]:
    """The servers' tools checked against their pins (`Pins.check`), and the hub made to
    withhold those the pins keep back; returns the changes found. Synchronous, so that no client
    lists the servers' new tools before they are checked."""
    found = pins.check(offered_specs(hub, naming, withheld=True))
    names = hub_names(hub, naming, withheld=True)
    hub.withheld = frozenset(names.prefixed(name) for name in pins.withheld)
    return found


class UpstreamTools:
    """The hub's tools, resources and prompts, as one client session sees them (names, limits,
    language)."""

    def __init__(self, hub: ToolHub, catalog: Catalog, naming: ToolNaming, limits: ImageLimits,
                 result_limits: ResultLimits, structured_first: bool = False) -> None:
        self.hub = hub
        self.catalog = catalog
        self.naming: ToolNaming = naming
        self.limits = limits
        self.result_limits = result_limits
        self.structured_first = structured_first
        """The client reads a result's `structuredContent` alone (`ClientProfile`): its tools are
        offered without `outputSchema`, its results with images without structured content."""
        self._prompts = Names((), naming)

    async def prompts(self) -> list[PromptDefinition]:
        """The servers' prompts, named as this client sees them (remembered for the record)."""
        prompts = await self.catalog.list_prompts()
        self._prompts = Names(((p.name, p.prompt.name) for p in prompts), self.naming)
        return [msgspec.structs.replace(p, prompt=p.prompt.model_copy(
            update={"name": self._prompts.exposed(p.name)})) for p in prompts]

    def names(self) -> Names:
        return hub_names(self.hub, self.naming)

    def tool_specs(self) -> list[ToolSpecRecord]:
        return offered_specs(self.hub, self.naming)

    def server_of(self, name: str, method: McpMethod = "tools/call") -> str:
        if method == "resources/read":
            return self.catalog.known_server(name)
        names = self.names() if method == "tools/call" else self._prompts
        resolved = self.hub.resolve(names.prefixed(name))
        return resolved[0] if resolved is not None else ""

    async def call(self, name: str, arguments: dict[str, Any], language: Language,
                   on_progress: ProgressListener | None = None,
                   method: McpMethod = "tools/call") -> ToolOutput:
        answer = await self._ask(name, arguments, language, on_progress, method)
        if isinstance(answer, ClientOutput):
            return answer
        plan = await plan_for_client(answer, language=language, limits=self.limits,
                                     result_limits=self.result_limits,
                                     structured_first=self.structured_first)
        return client_output(plan)

    async def _ask(self, name: str, arguments: dict[str, Any], language: Language,
                   on_progress: ProgressListener | None,
                   method: McpMethod) -> ClientSource | ClientOutput:
        """The server's answer, or the fault (a server's own refusal kept to hand on)."""
        if method == "tools/call":
            outcome = await self.hub.call_result(self.names().prefixed(name), arguments,
                                                 on_progress)
            return (ClientOutput.faulted(outcome, language) if isinstance(outcome, str)
                    else outcome)
        try:
            if method == "resources/read":
                return await self.catalog.read_resource(name)
            await self.prompts()
            return await self.catalog.get_prompt(self._prompts.prefixed(name),
                                                 {k: str(v) for k, v in arguments.items()})
        except McpUnavailable as error:
            return ClientOutput.faulted(str(error), language)
        except MCPError as error:  # the server's own refusal: the client gets it as it was
            return ClientOutput.faulted(error.message, language, refusal=error)
