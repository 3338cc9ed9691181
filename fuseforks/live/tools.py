"""MCP tools behind the tool port."""

from __future__ import annotations

from typing import Any

import msgspec

from fuseforks.core.names import Language
from fuseforks.events.types import ToolSpecRecord
from fuseforks.mcp.hub import ToolHub
from fuseforks.ports.tools import ToolOutput


class HubTools:
    """The tools of a started `ToolHub`."""

    def __init__(self, hub: ToolHub) -> None:
        self.hub = hub
        self._servers = {d.name: d.server for d in hub.list_tools()}

    def tool_specs(self) -> list[ToolSpecRecord]:
        return [
            ToolSpecRecord(name=d.name, description=d.description,
                           input_schema=msgspec.json.encode(d.input_schema).decode())
            for d in self.hub.list_tools()
        ]

    def server_of(self, name: str) -> str:
        return str(self._servers.get(name, ""))

    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        return await self.hub.call(name, arguments, language)
