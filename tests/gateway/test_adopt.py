"""A client's servers taken into the gateway's configuration: every entry as written, the
gateway's own entries left out, the client's file untouched — and the gateway then runs them."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.core.errors import ConfigError
from fuseforks.gateway.adopt import adopt
from tests.gateway.conftest import camera, stdio_gateway

GATEWAY = {"command": "/opt/ff/.venv/bin/fuseforks",
           "args": ["gateway", "--config", "/home/me/mcp.json"]}
MODULE_GATEWAY = {"command": sys.executable, "args": ["-m", "fuseforks", "gateway", "--config",
                                                      "/elsewhere/mcp.json"]}
WEB = {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN:-x}"}}


def test_every_entry_is_kept_as_written_but_the_gateways() -> None:
    kept, left_out = adopt({"mcpServers": {"cam": camera(), "gateway": GATEWAY, "web": WEB,
                                           "other": MODULE_GATEWAY,
                                           "off": {**camera(), "disabled": True}}})
    assert kept == {"cam": camera(), "web": WEB, "off": {**camera(), "disabled": True}}
    assert left_out == ["gateway", "other"]


def test_vs_codes_servers_are_read_too() -> None:
    stdio = {"type": "stdio", **camera()}
    assert adopt({"servers": {"cam": stdio, "gw": {"type": "stdio", **GATEWAY}}}) == (
        {"cam": stdio}, ["gw"])


@pytest.mark.parametrize(("document", "message"), [
    ({"tools": {}}, 'a client configuration keeps its servers in an "mcpServers" object (or VS '
                    'Code\'s "servers")'),
    ({"mcpServers": {"ws": {"type": "websocket", "url": "ws://x"}}},
     "mcpServers.ws: transport type 'websocket' is not supported (supported: stdio, http "
     "(streamable HTTP), sse)"),
])
def test_what_the_gateway_could_not_use_is_one_line(document: object, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        adopt(document)
    assert str(refused.value) == message


async def test_the_command_writes_a_new_file_the_gateway_runs(tmp_path: Path) -> None:
    client = tmp_path / "claude_desktop_config.json"
    client.write_text(json.dumps({"mcpServers": {"cam": camera(), "gateway": GATEWAY}}))
    before = client.read_bytes()
    config = tmp_path / "mcp.json"
    done = CliRunner().invoke(main, ["mcp", "adopt", str(client), "--config", str(config)])
    assert (done.exit_code, done.stdout.splitlines(), done.stderr.splitlines()) == (0, [
        f"adopted 1 servers of {client} into {config}; give the client the gateway instead: "
        f"fuseforks gateway --config {config} --snippet CLIENT"],
        ["left out 'gateway': it runs a fuseforks gateway"])
    assert json.loads(config.read_text()) == {"mcpServers": {"cam": camera()}}
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert client.read_bytes() == before
    again = CliRunner().invoke(main, ["mcp", "adopt", str(client), "--config", str(config)])
    assert (again.exit_code, again.stderr) == (
        1, f"Error: {config}: already exists; adopting writes a new file\n")
    async with stdio_gateway(config, "--db", str(tmp_path / "g.db")) as gateway:
        tools = [tool.name for tool in (await gateway.list_tools()).tools]
    assert tools == ["cam__live_view_image", "cam__camera_status"]
