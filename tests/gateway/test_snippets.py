"""A client's configuration for the gateway, with absolute paths: exactly what each client
reads, and a command that starts the gateway from the client's own folder without the user's
PATH — the way a desktop client starts it."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from fuseforks.gateway.snippets import launcher, snippet
from tests.gateway.conftest import camera, write_config
from tests.helpers import processes

COMMAND = ["/opt/ff/.venv/bin/fuseforks"]


def test_each_client_gets_its_own_format_with_absolute_paths(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    entry = {"command": "/opt/ff/.venv/bin/fuseforks",
             "args": ["gateway", "--config", str(config)]}
    assert json.loads(snippet("claude-desktop", config, COMMAND)) == {
        "mcpServers": {"fuseforks-gateway": entry}}
    assert json.loads(snippet("cursor", config, COMMAND)) == {
        "mcpServers": {"fuseforks-gateway": entry}}
    assert json.loads(snippet("vscode", config, COMMAND)) == {
        "servers": {"fuseforks-gateway": {"type": "stdio", **entry}}}
    assert snippet("claude-code", tmp_path / "my servers.json", COMMAND) == (
        "claude mcp add fuseforks-gateway -- /opt/ff/.venv/bin/fuseforks gateway --config "
        f"'{tmp_path / 'my servers.json'}'")


def test_the_command_is_the_script_beside_the_interpreter_else_the_interpreter(
        tmp_path: Path) -> None:
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.touch()
    assert launcher(str(python)) == [str(python), "-m", "fuseforks"]
    script = python.with_name("fuseforks")
    script.write_text("#!/bin/sh\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert launcher(str(python)) == [str(script)]


async def test_the_printed_entry_starts_the_gateway_from_anywhere(tmp_path: Path) -> None:
    config = write_config(tmp_path, cam=camera())
    printed = processes.run([sys.executable, "-m", "fuseforks", "gateway", "--config",
                             str(config), "--snippet", "claude-desktop"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["fuseforks-gateway"]
    assert Path(entry["command"]).is_absolute()
    elsewhere = tmp_path / "client"
    elsewhere.mkdir()
    parameters = StdioServerParameters(  # as a desktop client: its own folder, a bare PATH
        command=entry["command"], args=[*entry["args"], "--db", str(tmp_path / "g.db")],
        cwd=str(elsewhere), env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")})
    async with Client(parameters, client_info=Implementation(name="claude-ai", version="1")
                      ) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
    assert tools == ["cam__live_view_image", "cam__camera_status"]
