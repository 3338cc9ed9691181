"""What a client's configuration needs to start the gateway, for the clients people use.

A client starts a stdio server by the command its configuration names, from its own working
folder and often without the user's PATH: `"command": "fuseforks"` is found by no client when
fuseforks lives in a virtual environment. So the snippet names the command and the config file
by absolute paths — the `fuseforks` script beside this interpreter, else the interpreter itself
with `-m fuseforks` — in each client's own format: Claude Desktop's and Cursor's `mcpServers`
file, VS Code's `servers` file (`.vscode/mcp.json`), Claude Code's `claude mcp add` line.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from fuseforks.core.errors import UnknownName

SNIPPET_CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")
"""The clients `fuseforks gateway --snippet` writes a configuration for."""

ENTRY_NAME = "fuseforks-gateway"
"""The name the gateway's entry gets in a client's configuration."""


def launcher(executable: str | None = None) -> list[str]:
    """The absolute command that runs fuseforks with the interpreter running now: its `fuseforks`
    script when there is one beside it (a virtual environment's `bin`), else `python -m
    fuseforks`. The interpreter's path is kept as it is, not resolved: a virtual environment's
    `python` is a link out of it, and the environment is what must run."""
    python = Path(executable or sys.executable).absolute()
    script = python.with_name("fuseforks")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-m", "fuseforks"]


def snippet(client: str, config: Path, command: list[str]) -> str:
    """The text to put in `client`'s configuration to run the gateway over `config`."""
    argv = [*command, "gateway", "--config", str(config.absolute())]
    entry = {"command": argv[0], "args": argv[1:]}
    if client in ("claude-desktop", "cursor"):
        return json.dumps({"mcpServers": {ENTRY_NAME: entry}}, indent=2)
    if client == "vscode":
        return json.dumps({"servers": {ENTRY_NAME: {"type": "stdio", **entry}}}, indent=2)
    if client == "claude-code":
        return shlex.join(["claude", "mcp", "add", ENTRY_NAME, "--", *argv])
    raise UnknownName(f"no snippet for client {client!r}; known: {', '.join(SNIPPET_CLIENTS)}")
