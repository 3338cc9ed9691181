"""A turn whose configured MCP server did not start is not sent: a model asked to use a tool it
is not offered answers something else, and the user would not know why. The turn is recorded as
not started, naming the servers and why; `allow_missing_servers` sends it without their tools,
the record naming them all the same."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from click.testing import CliRunner

from fuseforks import Agent
from fuseforks.agent import AgentSettings
from fuseforks.cli import main
from fuseforks.events.types import ServerDown, ToolCalled, TurnEnded, TurnNotStarted, TurnStarted
from fuseforks.simulator import run_simulator
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes

REPO = Path(__file__).resolve().parents[2]

QUIT = [sys.executable, "-c",
        "import sys; print('boom: missing API_TOKEN', file=sys.stderr); sys.exit(3)"]
SERVERS = {"mcpServers": {
    "quit": {"command": QUIT[0], "args": QUIT[1:]},
    "nik": {"command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]},
}}
REASON = ("server 'quit' exited before completing the MCP handshake (exit status 3; stderr: "
          "boom: missing API_TOKEN)")


async def test_the_turn_is_recorded_as_not_sent_and_nothing_reaches_the_model(
        tmp_path: Path) -> None:
    asked = tmp_path / "requests"
    async with run_simulator(record_dir=asked) as simulator, Agent(
            wire="anthropic", model="claude-sonnet-5-5", api_key="sk-offline",
            base_url=simulator.base_urls["anthropic"], mcp=SERVERS,
            db=tmp_path / "a.db") as agent:
        assert agent.start_faults == {"quit": REASON}
        result = await agent.run("Take a picture.")
    assert (result.stop, result.rounds, result.answer, result.images) == ("error", 0, "", [])
    assert result.error == (
        f"not sent: {REASON}; turns are sent without a server that did not start only when "
        "that is allowed (allow_missing_servers)")
    assert not asked.exists() or list(asked.iterdir()) == []
    with SqliteStore(tmp_path / "a.db") as store:
        recorded = [e.event for e in store.read(result.turn_id)]
    assert [type(e) for e in recorded] == [TurnNotStarted, TurnEnded]
    assert recorded[0].servers_down == [ServerDown(server="quit", reason=REASON)]
    verified = await anyio.to_thread.run_sync(
        CliRunner().invoke, main, ["replay", str(tmp_path / "a.db"), "--verify"])
    assert verified.exit_code == 0, verified.output
    log = await anyio.to_thread.run_sync(CliRunner().invoke, main, ["log", str(tmp_path / "a.db")])
    assert log.stdout.splitlines()[0] == (f'tool server down: agent=agent server=quit '
                                          f'reason="{REASON}"')


async def test_allowed_the_turn_goes_on_without_the_servers_tools(tmp_path: Path) -> None:
    async with run_simulator() as simulator, Agent(
            wire="anthropic", model="claude-sonnet-5-5", api_key="sk-offline",
            base_url=simulator.base_urls["anthropic"], mcp=SERVERS, db=tmp_path / "a.db",
            settings=AgentSettings(allow_missing_servers=True)) as agent:
        result = await agent.run("Take a picture.")
    assert (result.stop, result.error) == ("answered", "")
    started = result.events[0].event
    assert isinstance(started, TurnStarted)
    assert started.servers_down == [ServerDown(server="quit", reason=REASON)]
    assert [e.event.name for e in result.events if isinstance(e.event, ToolCalled)] == [
        "nik__live_view_image"]


def run(tmp_path: Path, simulator_url: str, *extra: str) -> tuple[int, str, str]:
    """`fuseforks run` as a user runs it, in a process of its own."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(SERVERS))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = processes.run([
        sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model",
        "claude-sonnet-5-5", "--base-url", f"{simulator_url}/anthropic", "--mcp-config",
        str(config), "--no-stream", "--db", str(tmp_path / "run.db"), "--log",
        str(tmp_path / "run.log"), *extra, "Take a picture."],
        capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    return done.returncode, done.stdout, done.stderr


async def test_run_says_why_in_one_line_and_how_to_go_on_without(tmp_path: Path) -> None:
    async with run_simulator(require_key=False) as simulator:
        code, out, err = await anyio.to_thread.run_sync(run, tmp_path, simulator.base_url)
        allowed = await anyio.to_thread.run_sync(run, tmp_path, simulator.base_url,
                                                 "--allow-missing-servers")
    assert (code, err.splitlines()[-1]) == (1, (
        f"Error: not sent: {REASON} (--allow-missing-servers sends turns without the tools of a "
        "server that did not start)"))
    assert [line for line in err.splitlines() if "did not start" in line] == [err.splitlines()[-1]]
    assert out.splitlines() == [
        f'tool server down: agent=agent server=quit reason="{REASON}"',
        "turn: agent=agent backend=anthropic model=claude-sonnet-5-5 rounds=0 stop=error"]
    assert allowed[0] == 0, allowed[2]
    assert f"… MCP server quit did not start: {REASON} (the turn goes on without its tools)" in \
        allowed[2].splitlines()


def test_chat_refuses_to_begin_and_says_why(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(SERVERS))
    result = CliRunner().invoke(main, [
        "chat", "--wire", "openai-compat", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
        "--mcp-config", str(config), "--db", str(tmp_path / "c.db"), "--log",
        str(tmp_path / "c.log")], input="hello\n")
    assert result.exit_code == 1, (result.output, result.exception)
    assert result.stderr.splitlines()[-1] == (
        f"Error: not sent: {REASON} (--allow-missing-servers sends turns without the tools of a "
        "server that did not start)")
