"""The live adapters behind the engine's ports: a provider over HTTP, tools over MCP."""

from fuseforks.live.model import LiveModel
from fuseforks.live.tools import HubTools

__all__ = ["HubTools", "LiveModel"]
