"""What an agent knows to be secret, and so keeps out of its record.

Its own provider key; the keys the environment holds for any of the seven wires (a user may paste
another provider's); and, from its MCP servers' configurations, the environment values and HTTP
header values whose names say they are secret (a token, a key, a password — not `LOG_LEVEL`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from fuseforks.core.names import WireName
from fuseforks.events.secrets import Secrets
from fuseforks.mcp.config import HttpServer, ServerConfig, StdioServer
from fuseforks.wires.base import Endpoint
from fuseforks.wires.registry import WIRES, get_wire

SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|cookie|session|bearer|"
                         r"private|signature", re.IGNORECASE)
"""A configuration entry named like this holds a secret."""


def known_secrets(endpoint: Endpoint, servers: Iterable[ServerConfig],
                  environ: Mapping[str, str] | None = None,
                  wire: WireName | None = None) -> Secrets:
    """The secrets of an agent of `wire` (its key named after the wire's variable) with these
    servers; without a wire, of a process that holds keys only in its environment."""
    env = os.environ if environ is None else environ
    named: dict[str, str] = {}
    for each in WIRES:
        for variable in get_wire(each).key_envs:
            if env.get(variable):
                named[variable] = env[variable]
    if endpoint.api_key and endpoint.api_key not in named.values():
        named[get_wire(wire).key_envs[0] if wire else "the provider key"] = endpoint.api_key
    for server in servers:
        entries: Mapping[str, str] = {}
        if isinstance(server, StdioServer):
            entries = server.env
        elif isinstance(server, HttpServer):
            entries = server.headers
        for name, value in entries.items():
            if SECRET_NAME.search(name):
                named[f"{server.name}.{name}"] = value
                scheme, _, token = value.partition(" ")
                if token and scheme.lower() in ("bearer", "basic", "token"):
                    named[f"{server.name}.{name} token"] = token
    return Secrets(named)
