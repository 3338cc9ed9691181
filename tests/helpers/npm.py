"""The npm packages the tests run: MCP servers and a client other people wrote.

The servers other people wrote are the honest test of the tool layer and the gateway:
`@modelcontextprotocol/server-everything` (every kind of content, resource links, annotations,
progress, over stdio, streamable HTTP and the older HTTP+SSE), `@modelcontextprotocol/
server-filesystem` (`read_media_file`), `@playwright/mcp` (a browser's screenshots, driving the
distribution's Chromium), the MCP Inspector's CLI (a client), and the packages a server of the
tests' own is written with. `tests/npm/package.json` names them at exact versions and its
`package-lock.json` holds the whole tree; `make test` installs it (`npm ci`, only when
`node_modules` is missing or older than the lock), as a user installs a project's npm packages.
The tests run them from that `node_modules` and download nothing: a test run without them fails
and says how to install them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[2] / "tests" / "npm"
CHROMIUM = Path("/usr/bin/chromium")
"""The browser `@playwright/mcp` drives: the distribution's, which `make test` installs too."""


def _missing() -> list[str]:
    """The packages of `package.json` not installed at their exact version."""
    wanted: dict[str, str] = json.loads((FOLDER / "package.json").read_text())["dependencies"]
    missing = []
    for name, version in sorted(wanted.items()):
        manifest = FOLDER / "node_modules" / name / "package.json"
        try:
            installed = json.loads(manifest.read_text()).get("version")
        except (OSError, ValueError):
            installed = None
        if installed != version:
            missing.append(f"{name}@{version}" + (f" (found {installed})" if installed else ""))
    return missing


def node_modules() -> Path:
    """The `node_modules` folder of `tests/npm`, every package of its lock installed; fails the
    test, saying how to install them, when they are not."""
    missing = _missing()
    if missing:
        pytest.fail(f"npm packages of tests/npm are not installed: {', '.join(missing)}. "
                    "`make test` installs them (or `make npm` alone: "
                    "npm ci --prefix tests/npm)", pytrace=False)
    return FOLDER / "node_modules"


def npm_bin() -> Path:
    """The `node_modules/.bin` folder holding `mcp-server-everything`, `mcp-server-filesystem`,
    `playwright-mcp` and `mcp-inspector`."""
    return node_modules() / ".bin"


def inspector() -> list[str]:
    """The MCP Inspector's CLI, as a command."""
    return [str(npm_bin() / "mcp-inspector"), "--cli"]


def everything() -> dict[str, object]:
    """An mcpServers entry for server-everything over stdio."""
    return {"command": str(npm_bin() / "mcp-server-everything"), "args": ["stdio"]}


def playwright(output: Path) -> dict[str, object]:
    """An mcpServers entry for `@playwright/mcp` over stdio: headless, the distribution's
    Chromium (no browser download), a profile kept in memory, the files it saves under
    `output`. Chromium's sandbox needs a user namespace a root process does not get, so as root
    it runs without one."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs the distribution's Chromium",
                    pytrace=False)
    args = ["--headless", "--isolated", "--executable-path", str(CHROMIUM),
            "--output-dir", str(output)]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    return {"command": str(npm_bin() / "playwright-mcp"), "args": args, "cwd": str(output)}
