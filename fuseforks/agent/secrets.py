"""What an agent knows to be secret, and so keeps out of its record.

Its own provider key; the keys the environment holds for any wire (a user may paste another
provider's) and the clouds' credential secrets it holds (`AWS_SECRET_ACCESS_KEY`, …); and, from
its MCP servers' configurations, the environment values and HTTP header values whose names say
they are secret (a token, a key, a password — not `LOG_LEVEL`). The tokens a cloud credential
mints while the agent runs are taken out at the HTTP edge, out of anything a provider echoes.
The OAuth tokens, client secrets and codes of its MCP servers' logins are learnt by its tool hub
as they come (`ToolHub.secrets`), and the agent's secrets include them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from fuseforks.core.names import WireName
from fuseforks.events.secrets import Secrets
from fuseforks.mcp.config import ServerConfig, secret_entries
from fuseforks.wires.base import Endpoint
from fuseforks.wires.registry import CREDENTIAL_VARIABLES, KEY_VARIABLES, get_wire


def known_secrets(endpoint: Endpoint, servers: Iterable[ServerConfig],
                  environ: Mapping[str, str] | None = None,
                  wire: WireName | None = None) -> Secrets:
    """The secrets of an agent of `wire` (its key named after the wire's variable) with these
    servers; without a wire, of a process that holds keys only in its environment."""
    env = os.environ if environ is None else environ
    named: dict[str, str] = {}
    for variable in KEY_VARIABLES + CREDENTIAL_VARIABLES:
        if env.get(variable):
            named[variable] = env[variable]
    if endpoint.api_key and endpoint.api_key not in named.values():
        variables = get_wire(wire).key_envs if wire else ()
        named[variables[0] if variables else "the provider key"] = endpoint.api_key
    for server in servers:
        named.update(secret_entries(server))
    return Secrets(named)
