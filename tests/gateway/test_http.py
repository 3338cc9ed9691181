"""The gateway over streamable HTTP: the SDK's client in both protocol eras, and who may reach it
— a missing or wrong bearer token and a foreign Origin are refused before anything reaches an
upstream server; any address but a loopback one needs a token to start at all."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import signal
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ImageContent, Implementation
from PIL import Image

from fuseforks.events.types import ResultSent, SessionEnded, SessionStarted
from tests.gateway.conftest import (
    REPO,
    gateway_command,
    http_gateway,
    recorded,
    shots,
    write_config,
)
from tests.helpers import processes

TOKEN = "test-token-0d8c7e"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "shots__small", "arguments": {}}}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json",
          "mcp-protocol-version": "2025-06-18"}


@asynccontextmanager
async def http_client(url: str, *, mode: str = "auto", token: str | None = None,
                      client: str = "http-client") -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http:
        transport = streamable_http_client(url, http_client=http,
                                           max_sse_event_size=64 * 1024 * 1024)
        async with Client(transport, mode=mode,
                          client_info=Implementation(name=client, version="3")) as session:
            yield session


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_sdk_client_over_http_gets_the_screenshots_and_is_recorded(
        tmp_path: Path, mode: str) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "g.db"
    with http_gateway(config, "--db", str(db), "--profile", "many-images") as gateway:
        async with http_client(gateway.url, mode=mode) as client:
            both = await client.call_tool("shots__both", {})
        code = gateway.stop(signal.SIGTERM)
    assert code == 143
    received = [base64.b64decode(b.data) for b in both.content if isinstance(b, ImageContent)]
    sizes = []
    for data in received:
        with Image.open(io.BytesIO(data)) as opened:
            sizes.append(opened.size)
    assert sizes == [(2000, 1125), (2000, 1293)]
    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted)
    assert (started.client, started.transport, started.profile) == (
        "http-client", "http", "many-images")
    sent = [e.event for e in session if isinstance(e.event, ResultSent)]
    assert [d for s in sent for d in s.images] == [hashlib.sha256(d).hexdigest()
                                                   for d in received]
    ended = session[-1].event
    assert isinstance(ended, SessionEnded)
    # a handshake-era client deletes its HTTP session when it leaves; a 2026-07-28 client has
    # none, and its session ends with the gateway
    assert ended.cause == ("closed" if mode == "legacy" else "SIGTERM")


def test_requests_without_the_token_with_a_wrong_one_or_from_a_foreign_origin_are_refused(
        tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    config = write_config(tmp_path, shots=shots({"SHOTS_CALLS": str(calls)}))
    db = tmp_path / "g.db"
    with http_gateway(config, "--db", str(db), env={"FUSEFORKS_GATEWAY_TOKEN": TOKEN}) as gateway:
        with httpx.Client(timeout=60) as http:
            missing = http.post(gateway.url, json=CALL, headers=ACCEPT)
            wrong = http.post(gateway.url, json=CALL,
                              headers={**ACCEPT, "authorization": "Bearer not-the-token"})
            foreign = http.post(gateway.url, json=CALL, headers={
                **ACCEPT, "authorization": f"Bearer {TOKEN}", "origin": "http://evil.example"})
            rebound = http.post(gateway.url, json=CALL, headers={
                **ACCEPT, "authorization": f"Bearer {TOKEN}", "host": "evil.example:80"})
        gateway.stop(signal.SIGTERM)
    for refused in (missing, wrong):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
        assert refused.json()["error"] == "invalid_token"  # RFC 6750's code; the words are the SDK's
    assert foreign.status_code == 403
    assert rebound.status_code == 421
    assert not calls.exists()  # nothing reached the upstream server
    assert recorded(db) == []  # and nothing was recorded: no session ever began


async def test_the_right_token_and_a_local_origin_are_let_through(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    config = write_config(tmp_path, shots=shots({"SHOTS_CALLS": str(calls)}))
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n")
    with http_gateway(config, "--db", str(tmp_path / "g.db"), "--token-file",
                      str(token_file)) as gateway:
        async with http_client(gateway.url, token=TOKEN) as client:
            small = await client.call_tool("shots__small", {})
        gateway.stop(signal.SIGTERM)
    assert not small.is_error
    assert calls.read_text() == "small\n"


@pytest.mark.parametrize(("address", "environ", "message"), [
    ("192.0.2.1:8765", {}, "--http 192.0.2.1:8765: any address but a loopback one needs a "
                           "bearer token: set FUSEFORKS_GATEWAY_TOKEN or give --token-file "
                           "(never on the command line)"),
    ("0.0.0.0:8765", {"FUSEFORKS_GATEWAY_TOKEN": TOKEN},
     "listening on every address (0.0.0.0) needs --allow-host with the name and port clients "
     "use to reach the gateway (HOST:PORT)"),
    ("192.0.2.1:8765", {"FUSEFORKS_GATEWAY_TOKEN": "abc"},  # guessed in no time: as the console
     "FUSEFORKS_GATEWAY_TOKEN: the token must be at least 16 characters long"),
])
def test_another_address_without_what_it_needs_does_not_start(
        tmp_path: Path, address: str, environ: dict[str, str], message: str) -> None:
    config = write_config(tmp_path, shots=shots())
    result = processes.run(gateway_command(config, "--db", str(tmp_path / "g.db"), "--http",
                                           address),
                           cwd=REPO, capture_output=True, text=True, timeout=120,
                           env={**{k: v for k, v in os.environ.items()
                                   if k != "FUSEFORKS_GATEWAY_TOKEN"}, **environ})
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"Error: {message}\n")


def test_a_port_in_use_is_one_line_and_nothing_is_recorded(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "g.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = processes.run(gateway_command(config, "--db", str(db), "--http",
                                               f"127.0.0.1:{port}"),
                               cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"Error: gateway: Address already in use (127.0.0.1:{port})\n")
    assert not db.exists()  # refused before the store was opened


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_capabilities_over_http_say_the_lists_change(tmp_path: Path,
                                                               mode: str) -> None:
    config = write_config(tmp_path, shots=shots())
    with http_gateway(config, "--db", str(tmp_path / "g.db")) as gateway:
        async with http_client(gateway.url, mode=mode) as client:
            capabilities = client.server_capabilities
        gateway.stop(signal.SIGTERM)
    assert capabilities.tools is not None and capabilities.resources is not None
    assert capabilities.prompts is not None
    assert (capabilities.tools.list_changed, capabilities.resources.list_changed,
            capabilities.prompts.list_changed) == (True, True, True)
