"""The servers' resources, resource templates and prompts, together: what the gateway offers.

Tools are the hub's own business (the model calls them); a gateway also hands its client
everything else a server offers. Listings are gathered from every running server that declares
the capability, all pages, in configuration order: a server that fails to list is left out (and
logged) while the others still answer.

Names: a prompt is named like a tool, `<server>__<prompt>`; a resource keeps its URI (a URI
already says where it is; the first server to list a URI owns it). A read goes to the server that
listed the URI, or else to the first whose template's fixed beginning matches it (`file:///{path}`
matches `file:///notes.txt`).

Reads and prompts go out on the hub's one request path (`ToolHub.request`), the path a tool
result's linked resources are read on too. A request that reaches a server and is refused comes
back as that server's own `MCPError`; a request no server could answer raises `McpUnavailable`
with a one-line reason. What a read or a prompt holds is the plan's business, not this module's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgspec
from mcp import Client
from mcp.types import (
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
)

from fuseforks.core.errors import McpUnavailable
from fuseforks.mcp.connection import CallFault
from fuseforks.mcp.hub import SEPARATOR, ToolHub

logger = logging.getLogger("fuseforks.mcp")
_T = TypeVar("_T")
_PAGES = 100

ListPage = Callable[[Client, str | None], Awaitable[tuple[list[_T], str | None]]]
"""`(client, cursor) -> (items, next cursor)`: one page of a listing."""


class PromptDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """A prompt as the gateway offers it: prefixed name, its server, the server's own prompt."""

    name: str
    server: str
    prompt: Prompt


class Catalog:
    """The resources and prompts of a started `ToolHub`'s servers."""

    def __init__(self, hub: ToolHub) -> None:
        self.hub = hub
        self._owners: dict[str, str] = {}  # resource URI -> the server that listed it first

    async def _gather(self, capability: str, list_page: ListPage[_T]) -> list[tuple[str, _T]]:
        found: list[tuple[str, _T]] = []
        for name, _prefix, connection in self.hub.connected():
            offered = connection.capabilities
            if offered is None or getattr(offered, capability) is None:
                continue

            async def pages(client: Client) -> list[_T]:
                items: list[_T] = []
                cursor: str | None = None
                for _ in range(_PAGES):
                    page, cursor = await list_page(client, cursor)
                    items.extend(page)
                    if cursor is None:
                        break
                return items

            try:
                listed = await connection.request(f"{capability}/list", pages)
            except Exception as error:  # the server's own refusal: leave it out of the listing
                logger.warning("mcp %s/list refused: server=%s: %s", capability, name, error)
                continue
            if isinstance(listed, CallFault):
                self.hub.note_fault(name, listed)
                logger.warning("mcp %s/list failed: %s", capability, listed.reason)
                continue
            found.extend((name, item) for item in listed)
        return found

    async def list_resources(self) -> list[Resource]:
        async def page(client: Client, cursor: str | None) -> tuple[list[Resource], str | None]:
            result = await client.list_resources(cursor=cursor, cache_mode="bypass")
            return list(result.resources), result.next_cursor

        resources: dict[str, Resource] = {}
        for server, resource in await self._gather("resources", page):
            uri = str(resource.uri)
            if uri not in resources:
                resources[uri] = resource
                self._owners[uri] = server
        return list(resources.values())

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return [template for _, template in await self._templates()]

    async def _templates(self) -> list[tuple[str, ResourceTemplate]]:
        async def page(client: Client, cursor: str | None,
                       ) -> tuple[list[ResourceTemplate], str | None]:
            result = await client.list_resource_templates(cursor=cursor, cache_mode="bypass")
            return list(result.resource_templates), result.next_cursor

        return await self._gather("resources", page)

    def known_server(self, uri: str) -> str:
        """The server that listed `uri` when the resources were last listed ("" if none did)."""
        return self._owners.get(uri, "")

    async def server_of_resource(self, uri: str) -> str:
        """The server a read of `uri` goes to: the one that listed it, or else the first whose
        template matches it. `McpUnavailable` when none does."""
        server = self._owners.get(uri)
        if server is None:
            server = next((name for name, template in await self._templates()
                           if _matches(template.uri_template, uri)), None)
        if server is None:
            raise McpUnavailable(f"no server offers the resource {uri}")
        return server

    async def read_resource(self, uri: str) -> ReadResourceResult:
        return await self.hub.read_resource(await self.server_of_resource(uri), uri)

    async def list_prompts(self) -> list[PromptDefinition]:
        async def page(client: Client, cursor: str | None) -> tuple[list[Prompt], str | None]:
            result = await client.list_prompts(cursor=cursor, cache_mode="bypass")
            return list(result.prompts), result.next_cursor

        prefixes = {name: prefix for name, prefix, _ in self.hub.connected()}
        return [PromptDefinition(name=f"{prefixes[server]}{SEPARATOR}{prompt.name}",
                                 server=server, prompt=prompt)
                for server, prompt in await self._gather("prompts", page)]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> GetPromptResult:
        resolved = self.hub.resolve(name)
        if resolved is None:
            raise McpUnavailable(f"unknown prompt {name!r}")
        server, prompt = resolved
        return await self.hub.request(server, prompt,
                                      lambda client: client.get_prompt(prompt, arguments))


def _matches(template: str, uri: str) -> bool:
    """Whether `uri` could come from `template`: it begins with the template's fixed part."""
    fixed = template.split("{", 1)[0]
    return bool(fixed) and uri.startswith(fixed)
