"""`Agent` over real parts: the simulator on loopback, the demo camera over stdio, SQLite files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

import fuseforks
from fuseforks import Agent, HistoryBudget, RecordingFailed
from fuseforks.agent import AgentSettings
from fuseforks.cli import main
from fuseforks.events.types import TurnStarted
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore

CAMERA = {"mcpServers": {"nik": {"command": sys.executable,
                                 "args": ["-m", "fuseforks.demo.camera"]}}}
CALL = "nik__live_view_image"
KEY = "sk-agent-tests"


def anthropic_messages(body: bytes) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = json.loads(body)["messages"]
    return messages


def test_the_package_exports_the_library() -> None:
    assert {"Agent", "TurnResult", "Conversation", "HistoryBudget", "RecordingFailed",
            "FuseforksError", "normalize_image"} <= set(fuseforks.__all__)
    assert fuseforks.Agent is Agent


async def test_a_conversation_sends_earlier_exchanges_as_text_only(tmp_path: Path) -> None:
    db = tmp_path / "conv.db"
    async with run_simulator(script=Script(call_tools=(CALL,))) as sim, Agent(
        wire="anthropic", model="claude-sonnet-5-5", base_url=sim.base_urls["anthropic"], api_key=KEY,
        mcp=CAMERA, db=db, log=tmp_path / "conv.log",
    ) as agent:
        conversation = agent.conversation()
        first = await conversation.run("Take a picture.")
        cut = len(sim.received)
        second = await conversation.run("And another one, please.")
        bodies = [r.body for r in sim.received]

    assert first.conversation_id == second.conversation_id == conversation.id
    assert first.answer.startswith("I see 1 image.")
    assert [i.format for i in first.images] == ["JPEG"] and first.images[0].received
    first_digest = first.images[0].digest
    # The second turn's first request: the first exchange as text, then the new request.
    assert anthropic_messages(bodies[cut]) == [
        {"role": "user", "content": "Take a picture."},
        {"role": "assistant", "content": [{"type": "text", "text": first.answer}]},
        {"role": "user", "content": "And another one, please."},
    ]
    later = b"".join(bodies[cut:])
    first_image = json.loads(bodies[1])["messages"][2]["content"][0]["content"][0]
    assert first_image["type"] == "image"
    assert first_image["source"]["data"].encode() not in later  # no image of turn 1
    assert first_digest.encode() not in later
    for tool_use_id in {c["id"] for m in anthropic_messages(bodies[1]) if m["role"] == "assistant"
                        for c in m["content"] if c["type"] == "tool_use"}:
        assert tool_use_id.encode() not in later  # no tool call or result of turn 1
    assert b"output of the tool" not in bodies[cut]  # no carrier caption or note
    # Turn 2 sent its own new image, in turn 2 only.
    assert [i.digest for i in second.images] != [first_digest]
    assert len(second.images) == 1

    started = next(e.event for e in second.events if isinstance(e.event, TurnStarted))
    assert [(h.turn_id, h.request, h.answer) for h in started.history] == [
        (first.turn_id, "Take a picture.", first.answer)]
    def cli(*args: str) -> Any:
        return CliRunner().invoke(main, list(args))

    verify = await anyio.to_thread.run_sync(cli, "replay", str(db), "--verify")
    assert verify.exit_code == 0, verify.output
    assert verify.output.count("verify: identical") == 2
    # The second turn alone, exported into an empty store, verifies without the first.
    stream = tmp_path / "second.jsonl"
    exported = await anyio.to_thread.run_sync(cli, "export", str(db), "--turn", second.turn_id,
                                              "-o", str(stream))
    assert exported.exit_code == 0, exported.output
    alone = tmp_path / "alone.db"
    imported = await anyio.to_thread.run_sync(cli, "import", str(stream), "--db", str(alone))
    assert imported.exit_code == 0, imported.output
    verify = await anyio.to_thread.run_sync(cli, "replay", str(alone), "--verify")
    assert verify.exit_code == 0 and "verify: identical" in verify.output, verify.output


async def test_a_conversation_continues_from_another_agent_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    async with run_simulator(script=Script(call_tools=(CALL,))) as sim:
        settings: dict[str, Any] = {"wire": "gemini", "model": "gemini-3.8-flash",
                                    "base_url": sim.base_urls["gemini"], "api_key": KEY,
                                    "db": db, "log": None}
        async with Agent(**settings) as agent:
            first = await agent.run("What is an MCP server?")
        async with Agent(**settings) as agent:
            turns = await agent.conversation(first.conversation_id).turns()
            second = await agent.run("Say more.", conversation=first.conversation_id)
    assert [(t.turn_id, t.stop) for t in turns] == [(first.turn_id, "answered")]
    started = next(e.event for e in second.events if isinstance(e.event, TurnStarted))
    assert [h.answer for h in started.history] == [first.answer]


async def test_the_history_budget_drops_the_oldest_exchanges_and_records_it(
        tmp_path: Path) -> None:
    async with run_simulator(any_model=True) as sim, Agent(
        wire="openai-compat", model="m", base_url=sim.base_urls["openai-compat"], api_key=KEY,
        db=MemoryStore(), log=None, settings=AgentSettings(history=HistoryBudget(max_exchanges=2)),
    ) as agent:
        conversation = agent.conversation()
        results = [await conversation.run(f"question {n}") for n in range(4)]
    started = next(e.event for e in results[-1].events if isinstance(e.event, TurnStarted))
    assert [h.request for h in started.history] == ["question 1", "question 2"]
    assert started.history_dropped == 1


async def test_twenty_concurrent_conversations_keep_their_own_histories(tmp_path: Path) -> None:
    async with run_simulator(any_model=True) as sim, Agent(
        wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY,
        db=tmp_path / "many.db", log=None,
    ) as agent:
        conversations = [agent.conversation() for _ in range(20)]

        async def talk(index: int) -> None:
            for step in range(2):
                await conversations[index].run(f"conversation {index} step {step}")

        async with anyio.create_task_group() as group:
            for index in range(20):
                group.start_soon(talk, index)
        histories = {c.id: await c.turns() for c in conversations}
    with SqliteStore(tmp_path / "many.db") as store:
        for turn in store.turns():
            started = store.read(turn.turn_id)[0].event
            assert isinstance(started, TurnStarted)
            index = started.request.split()[1]
            assert all(h.request.startswith(f"conversation {index} ") for h in started.history)
            assert len(started.history) == (1 if started.request.endswith("step 1") else 0)
    assert all(len(turns) == 2 for turns in histories.values())


async def test_a_failed_record_raises_and_no_result_is_returned(tmp_path: Path) -> None:
    class BrokenStore(MemoryStore):
        def append(self, envelopes: Any) -> None:
            raise OSError("disk full")

    async with run_simulator(any_model=True) as sim, Agent(
        wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY, db=BrokenStore(),
        log=None,
    ) as agent:
        with pytest.raises(RecordingFailed, match="event store: disk full"):
            await agent.run("hello")
        assert not sim.received  # write-ahead: nothing left the process unrecorded
        with pytest.raises(RecordingFailed):
            await agent.run("hello again")


def test_an_agent_without_a_key_names_the_variable() -> None:
    with pytest.raises(fuseforks.FuseforksError, match="set ANTHROPIC_API_KEY"):
        Agent(wire="anthropic", model="m", base_url="https://api.example.com", db=MemoryStore())


async def test_a_loopback_provider_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = Agent(wire="openai-compat", model="m", base_url="http://127.0.0.1:9/v1",
                  db=MemoryStore(), log=None)
    assert agent.wire == "openai-compat"



async def test_a_server_that_did_not_start_is_in_the_turns_record(tmp_path: Path) -> None:
    broken = {"mcpServers": {"cam": {"command": "fuseforks-no-such-camera"}}}
    async with run_simulator(any_model=True) as sim, Agent(
        wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY,
        mcp=broken, db=MemoryStore(), log=tmp_path / "down.log",
        settings=AgentSettings(allow_missing_servers=True),
    ) as agent:
        result = await agent.run("hello")
    started = next(e.event for e in result.events if isinstance(e.event, TurnStarted))
    reason = "server 'cam' could not be started: command not found: 'fuseforks-no-such-camera'"
    assert [(d.server, d.reason) for d in started.servers_down] == [("cam", reason)]
    assert (tmp_path / "down.log").read_text().splitlines()[0] == (
        f'tool server down: agent=agent server=cam reason="{reason}"')


async def test_a_turn_id_whose_record_failed_can_be_run_again_once_the_store_is_back() -> None:
    """A worker retries a turn whose first commit failed (the store was away): the agent's bus
    must not keep refusing that turn with the old failure."""

    class FlakyStore(MemoryStore):
        failures = 1

        def append(self, envelopes: Any) -> None:
            if self.failures:
                self.failures -= 1
                raise OSError("connection lost")
            super().append(envelopes)

    store = FlakyStore()
    async with run_simulator(any_model=True) as sim, Agent(
        wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY, db=store,
        log=None,
    ) as agent:
        with pytest.raises(RecordingFailed, match="connection lost"):
            await agent.run("hello", turn_id="turn-again")
        result = await agent.run("hello", turn_id="turn-again")
    assert result.stop == "answered"
    assert [e.seq for e in store.read("turn-again")] == list(range(1, len(result.events) + 1))
