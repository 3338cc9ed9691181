"""MCP reference servers from the npm registry, installed by the test run itself.

The servers other people wrote are the honest test of the tool layer: `@modelcontextprotocol/
server-everything` (every kind of content, resource links, annotations, progress, over stdio,
streamable HTTP and the older HTTP+SSE) and `@modelcontextprotocol/server-filesystem`
(`read_media_file`), and the packages a server of the tests' own is written with. They are
installed once per checkout, at pinned versions, with the
machine's `npm` (Node 20 or later) into `.venv/npm-mcp` — beside the test dependencies that
`make test` installs, and removed with them by `make clean`. A lock lets concurrent test
processes share one install; a marker names the versions installed, so a changed pin installs
again.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

from tests.helpers import processes

PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
    # A server as many are written (tests/mcp/servers/banner.cjs): the official TypeScript SDK,
    # and dotenv, whose version 17 announces itself on stdout.
    "@modelcontextprotocol/sdk": "1.32.2",
    "dotenv": "17.4.2",
}
ROOT = Path(__file__).resolve().parents[2] / ".venv" / "npm-mcp"
_INSTALL_SECONDS = 600


def npm_bin() -> Path:
    """The `node_modules/.bin` folder holding `mcp-server-everything` and
    `mcp-server-filesystem`, installing them first when this checkout has not."""
    ROOT.mkdir(parents=True, exist_ok=True)
    specs = sorted(f"{name}@{version}" for name, version in PACKAGES.items())
    marker = ROOT / "installed.txt"
    with open(ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists() or marker.read_text().split() != specs:
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("the MCP reference servers need npm (Node 20 or later) on PATH")
            processes.run([npm, "install", "--prefix", str(ROOT), "--no-audit", "--no-fund",
                           "--no-save", "--loglevel=error", *specs],
                          check=True, timeout=_INSTALL_SECONDS, stdout=subprocess.DEVNULL)
            marker.write_text("\n".join(specs) + "\n")
    return ROOT / "node_modules" / ".bin"


def node_modules() -> Path:
    """The `node_modules` folder of those packages (installed first when needed): what a
    server script of the tests names as its `NODE_PATH`."""
    return npm_bin().parent
