"""A remote server's login never reaches the record: an agent whose turns call the tools of an
OAuth-protected server (one of which echoes the token it was called with), across a refresh of
its token, records markers instead of every token; and no token, code or client secret the
authorization server issued is in the store, its WAL, the log, an export, OTLP traces or the
spans — only in the token folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks import Agent
from fuseforks.cli import main
from fuseforks.events.types import ToolResultRecorded
from fuseforks.mcp import HttpServer, load_config
from fuseforks.mcp.tokens import TOKENS_VARIABLE, TokenFiles
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers.oauth import OAuthServer, log_in, oauth_server
from tests.traces.support import InMemory


@pytest.fixture(scope="module")
def remote() -> Iterator[OAuthServer]:
    with oauth_server() as server:
        yield server


async def test_no_token_code_or_client_secret_in_anything_an_agent_writes(
        remote: OAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = tmp_path / "tokens"
    monkeypatch.setenv(TOKENS_VARIABLE, str(tokens))
    config = remote.config(tmp_path)
    [design] = load_config(config)
    assert isinstance(design, HttpServer)
    report, _ = await log_in(design, TokenFiles(tokens))
    assert report.reason is None
    db, log = tmp_path / "agent.db", tmp_path / "agent.log"
    memory = InMemory()
    keeper = SqliteStore(db)  # an open connection keeps the WAL on disk to be scanned
    script = Script(call_tools=("design__whoami", "design__snapshot"))
    async with run_simulator(script=script) as sim, Agent(
            wire="anthropic", model="claude-sonnet-5-5", base_url=sim.base_urls["anthropic"],
            api_key="sk-offline-oauth", mcp=config, db=db, log=log,
            tracer_provider=memory.provider) as agent:
        first = await agent.run("Who am I, and what is on the board?")
        remote.expire()  # the next turn's call refreshes the token first
        second = await agent.run("Again.")
    assert (first.stop, second.stop) == ("answered", "answered"), (first.error, second.error)
    assert [len(r.images) for r in (first, second)] == [1, 1]
    issued = remote.state()
    assert len(issued["access"]) == 2  # the login's, and the refreshed one
    # The model got what the tool said; the record says which secret it was.
    assert any(issued["access"][1].encode() in r.body for r in sim.received)
    with SqliteStore(db, read_only=True) as store:
        echoed = [e.event.body for t in store.turns() for e in store.read(t.turn_id)
                  if isinstance(e.event, ToolResultRecorded) and e.event.name == "design__whoami"]
    assert echoed == ["you called with Bearer [secret: design access token]"] * 2

    exports = [tmp_path / "turns.jsonl", tmp_path / "traces.jsonl", tmp_path / "traces.pb"]
    for path, form in zip(exports, ["jsonl", "otlp-json", "otlp"], strict=True):
        done = CliRunner().invoke(main, ["export", str(db), "--format", form, "-o", str(path)])
        assert done.exit_code == 0, done.output
    written = [db, Path(f"{db}-wal"), log, *exports]
    assert all(path.exists() and path.stat().st_size > 0 for path in written)
    secrets = remote.secrets()
    assert len(secrets) >= 5  # two access and two refresh tokens, the code
    for path in written:
        data = path.read_bytes()
        assert [s for s in secrets if s.encode() in data] == [], path
    spans = [str(span.attributes) for span in memory.spans]
    assert spans and not any(s in text for s in secrets for text in spans)
    # They are kept in one place: the token folder.
    [kept] = tokens.iterdir()
    assert issued["refresh"][1].encode() in kept.read_bytes()
    keeper.close()


async def test_an_agent_started_before_the_login_takes_it_up_at_its_next_turn(
        remote: OAuthServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = tmp_path / "tokens"
    monkeypatch.setenv(TOKENS_VARIABLE, str(tokens))  # a worker's token folder, say
    config = remote.config(tmp_path)
    [design] = load_config(config)
    assert isinstance(design, HttpServer)
    script = Script(call_tools=("design__snapshot",))
    async with run_simulator(script=script) as sim, Agent(
            wire="anthropic", model="claude-sonnet-5-5", base_url=sim.base_urls["anthropic"],
            api_key="sk-offline-oauth", mcp=config, db=tmp_path / "a.db", log=None) as agent:
        waiting = await agent.run("What is on the board?")
        report, _ = await log_in(design, TokenFiles(tokens))  # a person, meanwhile
        assert report.reason is None
        taken_up = await agent.run("What is on the board now?")
    assert (waiting.stop, waiting.rounds) == ("error", 0)  # recorded as not started
    assert waiting.error is not None and waiting.error.startswith(
        f"not sent: server 'design' needs a login: fuseforks mcp login --config {config} design")
    assert taken_up.stop == "answered", taken_up.error
    assert [image.tool for image in taken_up.images] == ["design__snapshot"]
