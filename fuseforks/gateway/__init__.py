"""`fuseforks gateway`: an MCP server in front of the servers of an `mcpServers` file, for any MCP
client, applying the engine's tool-image rules within the client's limits and recording every
client session like a turn."""

from fuseforks.gateway.profiles import PROFILE_NAMES, ClientProfile, LimitOverrides, profile_for
from fuseforks.gateway.serve import Gateway, GatewayOptions, HttpOptions
from fuseforks.gateway.sessions import GatewaySettings

__all__ = [
    "PROFILE_NAMES",
    "ClientProfile",
    "Gateway",
    "GatewayOptions",
    "GatewaySettings",
    "HttpOptions",
    "LimitOverrides",
    "profile_for",
]
