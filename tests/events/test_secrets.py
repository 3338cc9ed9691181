"""Secrets never reach the record: a key pasted into a request, a tool's token in its output, a
provider's error quoting the key — each is a marker in the store, the log, the spans and exports,
while the model still got what was typed; every other text is untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from fuseforks import Agent
from fuseforks.engine.replay import verify
from fuseforks.events.codec import encode_event
from fuseforks.events.secrets import Secrets
from fuseforks.events.types import (
    RequestRefused,
    ResponseReceived,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnEvent,
    TurnStarted,
)
from fuseforks.simulator import Fault, Script, run_simulator
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers.streams import export_turn
from tests.traces.support import InMemory

KEY = "sk-ant-api03-Zt8fQ2xV9mKpL4wR7yN1bH6cJ3dS5gT0"
TOKEN = "ghp_4fRm8TqZ2vXy7LbN9cWk3PjD6sHa1GeU0oIt"
SERVERS = Path(__file__).parent / "servers"

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)


def events_with(text: str) -> list[TurnEvent]:
    """One event of each kind a pasted or echoed secret could land in, carrying `text`."""
    return [
        TurnStarted(max_rounds=8, image_cap=20, placement="native", summary_instruction="S",
                    agent="a", wire="anthropic", model="m", endpoint_host="h", language="en",
                    request=text, system=text),
        ToolCalled(round=1, call_id="c1", server="s", name="s__t",
                   arguments=msgspec.json.encode({"query": text}).decode()),
        ToolResultRecorded(round=1, call_id="c1", name="s__t", ok=False, body=text, fault=text),
        RequestRefused(round=1, status=400, error_type="x", code="c", message=text),
        ResponseReceived(round=1, text=text, stop_reason="end_turn"),
        TurnEnded(rounds=1, stop="error", answer=text, error=text),
    ]


@given(before=texts, after=texts)
def test_a_known_secret_anywhere_is_a_marker_and_nothing_else_changes(before: str,
                                                                      after: str) -> None:
    secrets = Secrets({"ANTHROPIC_API_KEY": KEY})
    for event in events_with(f"{before}{KEY}{after}"):
        cleaned = secrets.event(event)
        assert KEY.encode() not in encode_event(cleaned)
        assert b"[secret: ANTHROPIC_API_KEY]" in encode_event(cleaned)
        assert type(cleaned) is type(event)
    for event in events_with(before + after):
        if KEY not in before + after:
            assert secrets.event(event) is event  # ordinary text: byte for byte


def test_short_values_are_not_secrets_and_the_longest_is_replaced_whole() -> None:
    secrets = Secrets({"LOG_LEVEL": "debug", "A": "sk-abcdefgh", "B": "sk-abcdefgh-longer"})
    event = TurnEnded(rounds=1, stop="answered", answer="debug sk-abcdefgh-longer sk-abcdefgh")
    assert secrets.event(event) == TurnEnded(
        rounds=1, stop="answered", answer="debug [secret: B] [secret: A]")


async def test_a_turn_keeps_every_secret_it_knows_out_of_every_record(tmp_path: Path) -> None:
    db, log = tmp_path / "t.db", tmp_path / "t.log"
    memory = InMemory()
    camera = {"mcpServers": {"sec": {"command": sys.executable,
                                     "args": [str(SERVERS / "token_echo.py")],
                                     "env": {"CAM_TOKEN": TOKEN}}}}
    request = f"My key is {KEY}; what does the tool say?"
    async with run_simulator(script=Script(call_tools=("sec__whoami",))) as sim, Agent(
            wire="anthropic", model="claude-sonnet-5-5", api_key=KEY,
            base_url=sim.base_urls["anthropic"], mcp=camera, db=db, log=log,
            tracer_provider=memory.provider) as agent:
        answered = await agent.run(request)
        sim.inject(Fault.error(401, echo_key=True))  # a provider's error quoting the key it got
        refused = await agent.run("Once more.")
    assert answered.stop == "answered", answered.error
    assert refused.stop == "error"  # the HTTP edge already scrubs a key a provider quotes
    # The model got what the user typed and what the tool said.
    bodies = [r.body for r in sim.received]
    assert KEY.encode() in bodies[0] and TOKEN.encode() in bodies[1]
    # The record holds markers instead, and everything read from it does too.
    with SqliteStore(db) as store:
        first, second = (store.read(t.turn_id) for t in store.turns())
        for turn in store.turns():
            export_turn(store, turn.turn_id, tmp_path / f"{turn.turn_id}.jsonl")
    started = first[0].event
    assert isinstance(started, TurnStarted)
    assert started.request == "My key is [secret: ANTHROPIC_API_KEY]; what does the tool say?"
    (output,) = [e.event for e in first if isinstance(e.event, ToolResultRecorded)]
    assert output.body == "logged in with token [secret: sec.CAM_TOKEN]"
    ended = second[-1].event
    assert isinstance(ended, TurnEnded) and ended.stop == "error"
    for turn in (first, second):  # replay reads the markers and re-drives them alike
        assert (await verify(turn)).identical
    spans = [str(span.attributes) for span in memory.spans]
    assert not any(KEY in s or TOKEN in s for s in spans)
    assert_nowhere([KEY, TOKEN], [db, Path(f"{db}-wal"), log], tmp_path)


def assert_nowhere(secrets: list[str], files: list[Path], exports: Path) -> None:
    for where in [*files, *exports.glob("*.jsonl")]:
        if where.exists():
            for secret in secrets:
                assert secret.encode() not in where.read_bytes(), where


def test_secrets_learnt_while_running_reach_every_secrets_that_includes_them() -> None:
    hub = Secrets()
    agent = Secrets({"ANTHROPIC_API_KEY": KEY})
    agent.include(hub)
    before = events_with(f"token {TOKEN}")
    assert [agent.event(e) for e in before] == before  # not known yet: left as it is
    hub.learn({"design access token": TOKEN, "short": "abc"})
    assert len(agent) == 2
    assert agent.text(f"{KEY} and {TOKEN}") == (
        "[secret: ANTHROPIC_API_KEY] and [secret: design access token]")
    assert all(TOKEN not in msgspec.json.encode(agent.event(e)).decode() for e in before)
