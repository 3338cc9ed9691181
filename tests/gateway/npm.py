"""The npm packages the gateway tests run: the MCP Inspector's CLI (a real client) and
`@modelcontextprotocol/server-everything` (a real server with an image tool).

Installed by the test run itself, once, at pinned versions, into a folder of this virtual
environment (`npm install --prefix`); a run that finds them already there installs nothing.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.helpers import processes

PINS = {"@modelcontextprotocol/inspector": "2.12.0",
        "@modelcontextprotocol/server-everything": "2026.8.31"}
FOLDER = Path(sys.prefix) / "npm-gateway-tests"


def _installed(name: str) -> str | None:
    manifest = FOLDER / "node_modules" / name / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def install() -> Path:
    """The folder holding both packages at their pinned versions (installed if missing)."""
    if all(_installed(name) == version for name, version in PINS.items()):
        return FOLDER
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: the gateway's client tests need Node.js and npm")
    FOLDER.mkdir(parents=True, exist_ok=True)
    result = processes.run(
        [npm, "install", "--prefix", str(FOLDER), "--no-audit", "--no-fund", "--loglevel=error",
         *(f"{name}@{version}" for name, version in PINS.items())],
        capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(f"npm install failed ({result.returncode}): {result.stderr[-2000:]}")
    return FOLDER


def inspector(folder: Path) -> list[str]:
    return [str(folder / "node_modules" / ".bin" / "mcp-inspector"), "--cli"]


def everything(folder: Path) -> dict[str, object]:
    """An mcpServers entry for server-everything over stdio."""
    script = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
    return {"command": shutil.which("node") or "node", "args": [str(script / "index.js"), "stdio"]}
