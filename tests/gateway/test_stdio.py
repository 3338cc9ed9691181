"""The gateway over stdio, as an MCP client launches it, with the official SDK's client: the
screenshot server's 4K and retina PNGs reach each client profile within its limits, the record
holds their digests, the audit names the client, and `replay --verify` re-drives the session."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from click.testing import CliRunner
from mcp.types import CallToolResult, ImageContent, TextContent

from fuseforks.cli import main
from fuseforks.events.types import (
    ImagesCapped,
    ImagesNormalized,
    ResultSent,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
)
from tests.gateway.conftest import (
    REPO,
    camera,
    gateway_command,
    recorded,
    shots,
    stdio_gateway,
    write_config,
)
from tests.gateway.pictures import small_jpeg
from tests.helpers import processes
from tests.helpers.results import images_with_types as images
from tests.helpers.results import pixel_size as size


def texts(result: CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, TextContent)]


def wire_size(result: CallToolResult) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_it_does_not_know_gets_every_tool_and_images_by_the_engines_rules(
        tmp_path: Path, mode: str) -> None:
    config = write_config(tmp_path, cam=camera(), shots=shots())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), mode=mode) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        screen = await client.call_tool("shots__screen", {})
        small = await client.call_tool("shots__small", {})
        frame = await client.call_tool("cam__live_view_image", {})
    assert listed == ["cam__live_view_image", "cam__camera_status", "shots__screen",
                      "shots__retina", "shots__both", "shots__small", "shots__progress",
                      "shots__grow", "shots__redescribe", "shots__stall", "shots__pid"]
    # the engine's own rules: the 4K screenshot scaled to 1568 px (no model sees more), as JPEG
    [(jpeg, media_type)] = images(screen)
    assert (media_type, size(jpeg), texts(screen)) == ("image/jpeg", (1568, 882), [
        "4K screen", "(image 1: 3840×2160, sent at 1568×882 (×0.41))"])
    assert len(jpeg) <= 2 * 1024 * 1024
    [(passed, _)] = images(small)
    assert passed == small_jpeg()  # within every limit: the server's own bytes
    assert [type(b) for b in frame.content] == [ImageContent, TextContent]

    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted)
    assert (started.client, started.client_version, started.profile, started.transport) == (
        "test-client", "1.0", "image-rules", "stdio")
    assert (started.limits.max_edge_px, started.limits.max_bytes, started.limits.shrink) == (
        1568, 2 * 1024 * 1024, True)
    sent = [e.event for e in session if isinstance(e.event, ResultSent)]
    received = [hashlib.sha256(data).hexdigest()
                for result in (screen, small, frame) for data, _ in images(result)]
    assert [d for s in sent for d in s.images] == received
    normalized = [m.digest for e in session if isinstance(e.event, ImagesNormalized)
                  for m in e.event.images]
    assert normalized == received
    assert session[-1].event == SessionEnded(calls=3, cause="closed")


async def test_claude_desktop_gets_images_it_accepts_and_results_under_one_megabyte(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), client="claude-ai",
                             version="0.14.10") as client:
        screen = await client.call_tool("shots__screen", {})
        retina = await client.call_tool("shots__retina", {})
        both = await client.call_tool("shots__both", {})
    for result in (screen, retina, both):
        assert wire_size(result) <= 1_000_000
        assert all(max(size(data)) <= 1568 for data, _ in images(result))
    assert [size(data) for data, _ in images(screen)] == [(1568, 882)]
    assert [size(data) for data, _ in images(retina)] == [(1568, 1014)]
    assert len(images(both)) == 2  # shrunk to share the megabyte, both kept
    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted)
    assert (started.profile, started.result_limits.max_bytes) == ("claude-desktop", 1_000_000)
    assert not any(isinstance(e.event, ImagesCapped) for e in session)


async def test_claude_code_gets_results_within_its_token_limit(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), client="claude-code",
                             version="2.1.0") as client:
        both = await client.call_tool("shots__both", {})
    # four characters a token, base64 counted as text: 25,000 tokens is 100,000 characters
    assert wire_size(both) <= 100_000
    assert [max(size(data)) for data, _ in images(both)] != []
    [session] = recorded(db)
    started = session[0].event
    assert isinstance(started, SessionStarted)
    assert (started.profile, started.result_limits.max_tokens) == ("claude-code", 25_000)
    runner = CliRunner()
    audit = runner.invoke(main, ["audit", str(db), "--client", "claude-code", "--json"])
    rows = json.loads(audit.stdout)["client_deliveries"]
    sent = [hashlib.sha256(data).hexdigest() for data, _ in images(both)]
    assert [(r["digest"], r["client"], r["client_version"], r["tool"], r["server"])
            for r in rows] == [(d, "claude-code", "2.1.0", "shots__both", "shots") for d in sent]
    other = runner.invoke(main, ["audit", str(db), "--client", "claude-ai", "--json"])
    assert json.loads(other.stdout) == {"origins": [], "deliveries": []}


async def test_every_limit_can_be_set_over_the_profile_and_a_cut_is_noted(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), "--profile", "many-images",
                             "--max-images", "1", "--language", "ja") as client:
        both = await client.call_tool("shots__both", {})
    [(jpeg, _)] = images(both)
    assert max(size(jpeg)) == 2000
    assert texts(both) == ["two screens",
                           "（1 枚目の画像: 元は 3840×2160、2000×1125 に縮めて送りました（×0.52））\n"
                           "（2 枚目の画像は送りませんでした: 1 つの結果で送れる画像は 1 枚までです）"]
    async with stdio_gateway(config, "--db", str(db), "--max-result-bytes", "200000") as client:
        capped = await client.call_tool("shots__small", {})
        both = await client.call_tool("shots__both", {})
    assert wire_size(both) <= 200_000 and len(images(capped)) == 1


async def test_replay_verifies_a_recorded_session_and_the_log_names_the_client(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db), client="claude-ai") as client:
        await client.call_tool("shots__both", {})
        await client.call_tool("shots__nothing", {})
    runner = CliRunner()
    # replay runs its own event loop: in a thread of its own, beside this test's
    replayed = await anyio.to_thread.run_sync(runner.invoke, main, ["replay", str(db), "--verify"])
    assert replayed.exit_code == 0, replayed.output
    assert replayed.stdout.splitlines()[-1].startswith("  verify: identical (")
    [session] = recorded(db)
    log = runner.invoke(main, ["log", str(db)])
    assert log.stdout.splitlines() == [
        "tool: agent=gateway round=1 name=shots__both ok=true body_chars=106 images=2",
        "tool: agent=gateway round=2 name=shots__nothing ok=false body_chars=53",
        'session: agent=gateway client="claude-ai 1.0" calls=2 stop=closed',
    ]
    turns = runner.invoke(main, ["turns", str(db), "--json"])
    [row] = json.loads(turns.stdout)
    assert (row["wire"], row["model"], row["rounds"], row["stop"], row["images_sent"]) == (
        "gateway", "claude-ai 1.0", 2, "closed", 2)
    unknown = next(e.event for e in session if isinstance(e.event, ToolResultRecorded)
                   and e.event.name == "shots__nothing")
    assert unknown.fault == "unknown tool 'shots__nothing'"
    assert [e.event.name for e in session if isinstance(e.event, ToolCalled)] == [
        "shots__both", "shots__nothing"]


async def test_a_servers_token_in_a_result_reaches_the_client_and_never_the_record(
        tmp_path: Path) -> None:
    token = "ghp_4fRm8TqZ2vXy7LbN9cWk3PjD6sHa1GeU0oIt"
    echo = {"command": sys.executable,
            "args": [str(REPO / "tests" / "events" / "servers" / "token_echo.py")],
            "env": {"CAM_TOKEN": token}}
    config = write_config(tmp_path, sec=echo)
    db = tmp_path / "gateway.db"
    async with stdio_gateway(config, "--db", str(db)) as client:
        said = await client.call_tool("sec__whoami", {})
    assert texts(said)[0] == f"logged in with token {token}"  # the client gets what it asked
    [session] = recorded(db)
    (output,) = [e.event for e in session if isinstance(e.event, ToolResultRecorded)]
    assert output.body == "logged in with token [secret: sec.CAM_TOKEN]"
    assert_absent(token, tmp_path, but=config)


def assert_absent(secret: str, folder: Path, but: Path) -> None:
    for where in folder.iterdir():
        if where.is_file() and where != but:
            assert secret.encode() not in where.read_bytes(), where


def test_a_client_that_closes_stdin_at_once_ends_the_gateway_quietly(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "gateway.db"
    with open(os.devnull, "rb") as nothing:
        result = processes.run(gateway_command(config, "--db", str(db)), cwd=REPO, stdin=nothing,
                               capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "", f"fuseforks gateway: recording to {db}; servers started: shots\n")
    assert recorded(db) == []  # no client, no session


REQUESTS = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "piped", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "shots__progress", "arguments": {}}},
]


@pytest.mark.parametrize("kind", ["file", "pipe"])
def test_every_request_read_before_stdin_ends_is_answered(tmp_path: Path, kind: str) -> None:
    config = write_config(tmp_path, shots=shots())
    db = tmp_path / "gateway.db"
    lines = "".join(json.dumps(request) + "\n" for request in REQUESTS)
    command = gateway_command(config, "--db", str(db))
    if kind == "file":
        requests = tmp_path / "requests.jsonl"
        requests.write_text(lines)
        with requests.open("rb") as stdin:
            result = processes.run(command, cwd=REPO, stdin=stdin, capture_output=True,
                                   text=True, timeout=120)
    else:
        result = processes.run(command, cwd=REPO, input=lines, capture_output=True, text=True,
                               timeout=120)
    assert (result.returncode, result.stderr) == (
        0, f"fuseforks gateway: recording to {db}; servers started: shots\n")
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    answered = {a["id"]: a for a in answers if "id" in a}
    assert sorted(answered) == [1, 2, 3]
    assert answered[1]["result"]["serverInfo"]["name"] == "fuseforks-gateway"
    assert [t["name"] for t in answered[2]["result"]["tools"]][:2] == ["shots__screen",
                                                                       "shots__retina"]
    assert answered[3]["result"]["structuredContent"] == {"result": "done after 3 steps"}
    [session] = recorded(db)
    assert session[-1].event == SessionEnded(calls=1, cause="closed")
