"""A client's own MCP servers, taken into a gateway's configuration.

A user who already runs servers in Claude Desktop, Cursor, Claude Code or VS Code has them in
that client's file: `{"mcpServers": {...}}`, or VS Code's `{"servers": {...}}`. Adopting takes
every entry as written — disabled ones too, and each one's environment and headers — into a new
`mcpServers` file for the gateway, leaving out any entry that runs a fuseforks gateway (the
client's file may already hold one: the gateway must not stand in front of itself). The client's
file is not touched: it then needs only the gateway's own entry (`--snippet`).
"""

from __future__ import annotations

from typing import Any

from fuseforks.core.errors import ConfigError
from fuseforks.gateway.itself import runs_a_gateway
from fuseforks.mcp.config import parse_config

CLIENT_KEYS = ("mcpServers", "servers")
"""Where a client's file keeps its servers: most clients' key, then VS Code's."""


def adopt(document: Any) -> tuple[dict[str, Any], list[str]]:
    """The entries of a client's configuration to give the gateway, as written, and the names
    of the entries left out because they run a fuseforks gateway. Every kept entry is checked
    as the gateway will read it: `ConfigError` names the first one it cannot use."""
    found = next((document[key] for key in CLIENT_KEYS
                  if isinstance(document, dict) and isinstance(document.get(key), dict)), None)
    if found is None:
        raise ConfigError('a client configuration keeps its servers in an "mcpServers" object '
                          '(or VS Code\'s "servers")')
    kept: dict[str, Any] = {}
    gateways: list[str] = []
    for name, entry in found.items():
        servers = parse_config({"mcpServers": {name: entry}})
        if servers and runs_a_gateway(servers[0]):
            gateways.append(name)
        else:
            kept[name] = entry
    return kept, gateways
