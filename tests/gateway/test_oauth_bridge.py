"""The gateway as the bridge to a remote MCP server behind OAuth: a stdio client in front of
`fuseforks gateway` reaches the OAuth-protected server of `tests/mcp/servers/oauth_server.py`
behind it with the login a person made (`fuseforks mcp login`), the image rules applied and the
session recorded — and without any token in the record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from click.testing import CliRunner
from mcp.types import ImageContent, TextContent, ToolListChangedNotification

from fuseforks.cli import main
from fuseforks.events.types import ResultSent, SessionStarted, ToolResultRecorded
from fuseforks.mcp import HttpServer, load_config
from fuseforks.mcp.tokens import TOKENS_VARIABLE, TokenFiles
from tests.gateway.conftest import recorded, stdio_gateway
from tests.helpers.oauth import OAuthServer, log_in, oauth_server


@pytest.fixture(scope="module")
def remote() -> Iterator[OAuthServer]:
    with oauth_server() as server:
        yield server


def texts(content: list[object]) -> list[str]:
    return [block.text for block in content if isinstance(block, TextContent)]


async def test_a_stdio_client_reaches_an_oauth_server_through_the_gateway(
        remote: OAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = tmp_path / "tokens"
    monkeypatch.setenv(TOKENS_VARIABLE, str(tokens))  # the gateway process's token folder
    config = remote.config(tmp_path)
    [design] = load_config(config)
    assert isinstance(design, HttpServer)
    db = tmp_path / "gateway.db"
    announced = anyio.Event()

    async def messages(message: object) -> None:
        if isinstance(message, ToolListChangedNotification):
            announced.set()

    async with stdio_gateway(config, "--db", str(db), "--profile", "claude-desktop",
                             mode="legacy", message_handler=messages) as client:
        unlisted = (await client.list_tools()).tools
        before = await client.call_tool("design__snapshot", {})
        report, _ = await log_in(design, TokenFiles(tokens))  # a person, while it runs
        assert report.reason is None
        # The client's next listing takes the login up, and every client hears of the tools.
        listed = [tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools]
        with anyio.fail_after(60):
            await announced.wait()
        snapshot = await client.call_tool("design__snapshot", {})
        whoami = await client.call_tool("design__whoami", {})
        paint = await client.call_tool("design__paint", {})
    hint = f"fuseforks mcp login --config {config} design"
    # Before the login the client read why, in one line, and the gateway did not give up.
    assert before.is_error and texts(before.content)[-1].endswith(
        f"server 'design' needs a login: {hint}")
    assert unlisted == []
    assert listed == ["design__meet", "design__snapshot", "design__paint", "design__whoami"]
    assert not snapshot.is_error
    [image] = [b for b in snapshot.content if isinstance(b, ImageContent)]
    assert image.mime_type == "image/jpeg"
    assert texts(whoami.content)[0].startswith("you called with Bearer at-")  # the client's own
    assert paint.is_error and texts(paint.content)[-1].endswith(
        f"server 'design' needs a login with scope 'images draw': {hint}")

    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted) and started.profile == "claude-desktop"
    sent = [e.event for e in session if isinstance(e.event, ResultSent)]
    assert [(s.name, len(s.images)) for s in sent] == [
        ("design__snapshot", 0), ("design__snapshot", 1), ("design__whoami", 0),
        ("design__paint", 0)]
    bodies = [e.event.body for e in session if isinstance(e.event, ToolResultRecorded)]
    assert "you called with Bearer [secret: design access token]" in bodies

    runner = CliRunner()
    audit = await anyio.to_thread.run_sync(
        runner.invoke, main, ["audit", str(db), "--client", "test-client", "--json"])
    [row] = json.loads(audit.stdout)["client_deliveries"]
    assert (row["tool"], row["digest"]) == ("design__snapshot", sent[1].images[0])
    exported = tmp_path / "session.jsonl"
    done = await anyio.to_thread.run_sync(runner.invoke, main,
                                          ["export", str(db), "-o", str(exported)])
    assert done.exit_code == 0, done.output
    secrets = remote.secrets()
    for path in (db, Path(f"{db}-wal"), exported):
        if path.exists():
            data = path.read_bytes()
            assert [s for s in secrets if s.encode() in data] == [], path
