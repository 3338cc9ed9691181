"""What an agent keeps and reads per conversation: nothing left behind once a turn has ended,
no store read for a conversation that has no turns yet, nor for one whose tail it holds."""

from __future__ import annotations

import anyio

from fuseforks import Agent
from fuseforks.agent.result import TurnResult
from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnStarted
from fuseforks.simulator import run_simulator
from fuseforks.stores.memory import MemoryStore

KEY = "sk-conversation-costs"


async def test_an_agent_keeps_no_lock_of_a_conversation_once_its_turns_have_ended() -> None:
    """Every `run()` without a conversation starts a new one: a lock kept per conversation id
    would grow with every turn the agent ever ran."""
    async with run_simulator(any_model=True) as sim, Agent(
        wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY,
        db=MemoryStore(), log=None,
    ) as agent:
        for n in range(40):
            await agent.run(f"question {n}")
        conversation = agent.conversation()

        async def talk(n: int) -> None:
            await conversation.run(f"step {n}")

        async with anyio.create_task_group() as group:  # waiters on one conversation's lock
            for n in range(4):
                group.start_soon(talk, n)
        assert len(agent._locks) == 0
        assert len(await conversation.turns()) == 4


class CountingStore(MemoryStore):
    """A memory store that counts the reads of a conversation's history."""

    def __init__(self) -> None:
        super().__init__()
        self.conversation_reads: list[str] = []

    def conversation(self, conversation_id: str) -> list[Envelope]:
        self.conversation_reads.append(conversation_id)
        return super().conversation(conversation_id)


async def test_a_new_conversation_is_not_read_from_the_store_and_an_old_one_is() -> None:
    store = CountingStore()
    async with run_simulator(any_model=True) as sim, Agent(
        wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY,
        db=store, log=None,
    ) as agent:
        alone = await agent.run("a question on its own")
        async with agent.stream("a streamed question on its own") as streamed:
            async for _ in streamed:
                pass
        conversation = agent.conversation()
        first = await conversation.run("first")
        assert store.conversation_reads == []  # three new conversations: nothing to read
        second = await conversation.run("second")
        later = await agent.run("later", conversation=alone.conversation_id)
        assert store.conversation_reads == []  # their tails are kept, not read back

    def history(result: TurnResult) -> list[tuple[str, str]]:
        started = next(e.event for e in result.events if isinstance(e.event, TurnStarted))
        return [(h.request, h.answer) for h in started.history]

    assert history(first) == [] and history(alone) == []
    assert history(second) == [("first", first.answer)]
    assert history(later) == [("a question on its own", alone.answer)]
