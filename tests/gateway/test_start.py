"""How the gateway starts: it never starts itself from its own config file."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseforks.gateway.itself import runs_this_gateway
from fuseforks.mcp.config import HttpServer, StdioServer
from tests.gateway.conftest import REPO, camera, gateway_command, recorded, write_config
from tests.helpers import processes


def stdio(command: str, *args: str, cwd: str | None = None) -> StdioServer:
    return StdioServer(name="gw", command=command, args=list(args), cwd=cwd)


@pytest.mark.parametrize("server", [
    stdio("fuseforks", "gateway", "--config", "/home/me/mcp.json"),
    stdio("/opt/tools/bin/fuseforks", "gateway", "--profile", "generic", "--config=/home/me/mcp.json"),
    stdio("/usr/bin/python3", "-m", "fuseforks", "gateway", "--config", "/home/me/mcp.json"),
    stdio("python", "-u", "-m", "fuseforks", "gateway", "--config", "mcp.json", cwd="/home/me"),
    stdio("fuseforks", "gateway", "--config", "../me/./mcp.json", cwd="/home/me"),
])
def test_an_entry_that_runs_this_gateway_on_this_file_is_itself(server: StdioServer) -> None:
    assert runs_this_gateway(server, Path("/home/me/mcp.json"))


@pytest.mark.parametrize("server", [
    stdio("fuseforks", "gateway", "--config", "/home/me/other.json"),  # a chain: allowed
    stdio("fuseforks", "run", "--config", "/home/me/mcp.json"),
    stdio("fuseforks", "--config", "/home/me/mcp.json", "gateway"),
    stdio("/usr/bin/python3", "-m", "fuseforks.demo.camera", "gateway", "--config",
          "/home/me/mcp.json"),
    stdio("/usr/bin/python3", "-m", "fuseforks", "turns", "gateway", "--config",
          "/home/me/mcp.json"),
    stdio("node", "fuseforks", "gateway", "--config", "/home/me/mcp.json"),
    stdio("fuseforks", "gateway"),
    HttpServer(name="gw", url="http://127.0.0.1:8765/mcp"),
])
def test_any_other_entry_is_a_server(server: StdioServer | HttpServer) -> None:
    assert not runs_this_gateway(server, Path("/home/me/mcp.json"))


def test_the_gateway_skips_its_own_entry_and_starts_the_others(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    db = tmp_path / "g.db"
    itself = gateway_command(config)
    write_config(tmp_path, gateway={"command": itself[0], "args": itself[1:]}, cam=camera())
    result = processes.run(gateway_command(config, "--db", str(db), "--mcp-start-timeout", "10"),
                           cwd=REPO, input="", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "fuseforks gateway: skipped mcpServers.gateway: it runs this gateway on this same "
        "config file, and would start it again and again",
    ]
    assert recorded(db) == []  # no client came: nothing to record, and no server failed
