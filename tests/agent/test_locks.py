"""`ConversationLocks`: one turn of a conversation at a time, and no lock left once none waits."""

from __future__ import annotations

import anyio
import pytest

from fuseforks.agent.locks import ConversationLocks


async def test_the_book_is_empty_once_the_holder_leaves() -> None:
    locks = ConversationLocks()
    async with locks.hold("conv-a"):
        assert len(locks) == 1
    assert len(locks) == 0


async def test_turns_of_one_conversation_run_one_after_another() -> None:
    locks = ConversationLocks()
    order: list[str] = []
    first_in, release_first = anyio.Event(), anyio.Event()

    async def first() -> None:
        async with locks.hold("conv-a"):
            order.append("first in")
            first_in.set()
            await release_first.wait()
            order.append("first out")

    async def second() -> None:
        await first_in.wait()
        async with locks.hold("conv-a"):
            order.append("second in")

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        group.start_soon(second)
        await first_in.wait()
        await anyio.wait_all_tasks_blocked()
        assert order == ["first in"] and len(locks) == 1  # the second waits on the same lock
        release_first.set()
    assert order == ["first in", "first out", "second in"]
    assert len(locks) == 0


async def test_other_conversations_do_not_wait() -> None:
    locks = ConversationLocks()
    async with locks.hold("conv-a"):
        with anyio.fail_after(5):  # would deadlock, not slow down, if "conv-b" shared a lock
            async with locks.hold("conv-b"):
                assert len(locks) == 2
        assert len(locks) == 1
    assert len(locks) == 0


async def test_a_waiter_cancelled_while_waiting_leaves_nothing_behind() -> None:
    locks = ConversationLocks()
    async with locks.hold("conv-a"):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                async def wait_for_it() -> None:
                    async with locks.hold("conv-a"):
                        pytest.fail("the lock is held")

                group.start_soon(wait_for_it)
                await anyio.wait_all_tasks_blocked()
                assert len(locks) == 1
                scope.cancel()
        assert len(locks) == 1  # the holder's entry stays while it holds
    assert len(locks) == 0
