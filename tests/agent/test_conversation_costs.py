"""What an agent keeps and reads per conversation: nothing left behind once a turn has ended,
and no store read for a conversation that has no turns yet."""

from __future__ import annotations

import anyio

from fuseforks import Agent
from fuseforks.simulator import run_simulator
from fuseforks.stores.memory import MemoryStore

KEY = "sk-conversation-costs"


async def test_an_agent_keeps_no_lock_of_a_conversation_once_its_turns_have_ended() -> None:
    """Every `run()` without a conversation starts a new one: a lock kept per conversation id
    would grow with every turn the agent ever ran."""
    async with run_simulator() as sim, Agent(
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
