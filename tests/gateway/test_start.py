"""How the gateway starts: it never starts itself from its own config file, and it says in one
line on stderr where it records and which servers started (and why one did not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseforks.events.secrets import Secrets
from fuseforks.gateway.itself import runs_this_gateway
from fuseforks.gateway.serve import start_lines
from fuseforks.mcp.config import HttpServer, StdioServer
from fuseforks.stores.urls import DatabaseUrl
from tests.gateway.conftest import PYTHON, REPO, camera, gateway_command, recorded, write_config
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
        f"fuseforks gateway: recording to {db}; servers started: cam",
    ]
    assert recorded(db) == []  # no client came: nothing to record, and no server failed


def test_the_start_line_names_the_servers_that_did_not_start_and_why(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    refusing = {"command": PYTHON, "args": ["-c", (
        "import os, sys; print('refused', os.environ['CAM_TOKEN'], file=sys.stderr); "
        "sys.exit(3)")], "env": {"CAM_TOKEN": "tok-1234567890"}}
    config = write_config(tmp_path, cam=camera(), broken=refusing)
    result = processes.run(gateway_command(config, "--db", str(db)), cwd=REPO, input="",
                           capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"fuseforks gateway: recording to {db}; servers started: cam; did not start: broken",
        "fuseforks gateway: server 'broken' exited before completing the MCP handshake "
        "(exit status 3; stderr: refused [secret: broken.CAM_TOKEN])",
    ]


def test_the_start_lines_never_show_a_password_or_a_known_secret() -> None:
    lines = start_lines(DatabaseUrl("postgresql://gw:s3cret-pass@db.lan/fuseforks"), [],
                        {"remote": "server 'remote' failed the MCP handshake: bad key k-12345678"},
                        Secrets({"remote.Authorization token": "k-12345678"}))
    assert lines == [
        "recording to postgresql://gw:***@db.lan/fuseforks; servers started: none; "
        "did not start: remote",
        "server 'remote' failed the MCP handshake: bad key [secret: remote.Authorization token]",
    ]
