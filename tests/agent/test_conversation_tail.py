"""A conversation the agent holds is folded turn by turn instead of read back before each turn:
the history it sends is the one a read of the store would give, and a turn added elsewhere (by
another `Conversation` of the id, another agent, a takeover that ends a cut turn) is seen."""

from __future__ import annotations

from pathlib import Path

import msgspec

from fuseforks import Agent
from fuseforks.agent.agent import Tails
from fuseforks.agent.result import TurnResult
from fuseforks.agent.settings import AgentSettings
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import Exchange, TurnEnded, TurnStarted
from fuseforks.projections.conversation import (
    ConversationTail,
    ConversationTurn,
    HistoryBudget,
    conversation_tail,
    conversation_turns,
    history,
    tail_history,
    with_turn,
)
from fuseforks.simulator import Simulator, run_simulator
from fuseforks.stores.sqlite import SqliteStore

KEY = "sk-conversation-tail-0123456789"
BUDGET = HistoryBudget(max_exchanges=3, max_chars=10_000)
SETTINGS = AgentSettings(history=BUDGET)


def _turn(n: int, answer: str) -> ConversationTurn:
    return ConversationTurn(turn_id=f"t{n:03}", at=f"2026-12-02T00:00:{n:02}.000Z", agent="a",
                            request=f"question {n}", answer=answer,
                            stop="answered" if answer else "error")


def test_a_tail_folded_turn_by_turn_sends_what_every_turn_read_at_once_sends() -> None:
    turns = [_turn(n, f"answer {n}" * (n % 5) if n % 3 else "") for n in range(40)]
    for budget in (HistoryBudget(max_exchanges=4, max_chars=10**6),
                   HistoryBudget(max_exchanges=16, max_chars=60),
                   HistoryBudget(max_exchanges=0)):
        tail = ConversationTail(budget=budget)
        for k, turn in enumerate(turns):
            assert tail_history(tail) == history(turns[:k], budget)
            tail = with_turn(tail, turn)
        assert tail == conversation_tail(turns, budget)
        assert (tail.turns, tail.answered) == (40, sum(bool(t.answer) for t in turns))
        # it keeps what is sent, no more: the texts of 128 conversations stay small
        assert len(tail.recent) == len(history(turns, budget)[0])


def test_a_cut_turn_stays_open_in_the_tail() -> None:
    cut = msgspec.structs.replace(_turn(1, ""), stop="cut")
    tail = conversation_tail([_turn(0, "a"), cut, _turn(2, "b")], HistoryBudget(max_exchanges=3))
    assert tail.open == (("t001", 0),)
    assert [t.turn_id for t in tail.recent] == ["t000", "t002"]
    assert with_turn(tail, msgspec.structs.replace(cut, turn_id="t003"), last_seq=7).open == (
        ("t001", 0), ("t003", 7))


class CountingStore(SqliteStore):
    """A real SQLite store that counts the reads of a conversation and the looks at its size."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads: list[str] = []
        self.sizes: list[str] = []
        self.turns_read: list[str] = []

    def conversation(self, conversation_id: str) -> list[Envelope]:
        self.reads.append(conversation_id)
        return super().conversation(conversation_id)

    def conversation_size(self, conversation_id: str) -> int:
        self.sizes.append(conversation_id)
        return super().conversation_size(conversation_id)

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        self.turns_read.append(turn_id)
        return super().read(turn_id, after)


def _agent(sim: Simulator, store: SqliteStore) -> Agent:
    return Agent(wire="anthropic", model="m", base_url=sim.base_urls["anthropic"], api_key=KEY,
                 db=store, log=None, settings=SETTINGS)


def _sent(result: TurnResult) -> tuple[list[Exchange], int]:
    started = next(e.event for e in result.events if isinstance(e.event, TurnStarted))
    return started.history, started.history_dropped


def _from_the_store(store: SqliteStore, conversation_id: str) -> tuple[list[Exchange], int]:
    return history(conversation_turns(SqliteStore.conversation(store, conversation_id)), BUDGET)


async def test_a_held_conversation_sends_the_stores_history_without_reading_it(
        tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "s.db")
    async with run_simulator(any_model=True) as sim, _agent(sim, store) as agent:
        conversation = agent.conversation()
        for n in range(6):
            expected = _from_the_store(store, conversation.id)
            result = await conversation.run(f"step {n} of the inspection")
            assert _sent(result) == expected
        # a secret typed into a request reaches the history as the store keeps it: its marker
        await conversation.run(f"my key is {KEY}, step 6")
        expected = _from_the_store(store, conversation.id)
        assert expected[0][-1].request == "my key is [secret: ANTHROPIC_API_KEY], step 6"
        result = await conversation.run("step 7")
        assert _sent(result) == expected
        assert (len(_sent(result)[0]), _sent(result)[1]) == (3, 4)  # 7 earlier, 3 sent
    assert store.reads == []
    assert store.sizes == [conversation.id] * 7  # one count per turn after the first
    store.close()


async def test_a_turn_added_elsewhere_makes_the_agent_read_the_store(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store, theirs = CountingStore(path), CountingStore(path)
    async with run_simulator(any_model=True) as sim, _agent(sim, store) as agent, _agent(sim, theirs) as elsewhere:
        held = agent.conversation()
        await held.run("first")
        by_id = await agent.run("second, through the id", conversation=held.id)
        third = await held.run("third")
        assert store.reads == []  # the same agent: the id or the object, one tail
        assert [x.request for x in _sent(third)[0]] == ["first", "second, through the id"]
        other = await elsewhere.run("fourth, from another agent", conversation=held.id)
        assert theirs.reads == [held.id]  # an agent that holds no tail of it reads it
        fifth = await held.run("fifth")
        assert store.reads == [held.id]  # and the first agent sees a turn it did not run
        assert _sent(fifth) == ([Exchange(turn_id=r.turn_id, request=q, answer=r.answer)
                                 for q, r in (("second, through the id", by_id),
                                              ("third", third),
                                              ("fourth, from another agent", other))], 1)
        await held.run("sixth")
        assert store.reads == [held.id]
    store.close()
    theirs.close()


def test_an_agent_keeps_the_tails_of_its_most_recent_conversations_only() -> None:
    tails = Tails(limit=2)
    for name in ("a", "b", "c"):
        tails.keep(name, ConversationTail(turns=1))
    assert len(tails) == 2
    assert tails.take("a") is None
    assert tails.take("c") == ConversationTail(turns=1)
    assert tails.take("c") is None  # taken for a turn: kept again only when it ends


async def test_a_cut_turn_that_ends_later_makes_the_held_conversation_read_the_store(
        tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "s.db")
    async with run_simulator(any_model=True) as sim, _agent(sim, store) as agent:
        held = agent.conversation()
        first = await held.run("first")
        started = next(e.event for e in first.events if isinstance(e.event, TurnStarted))
        # a turn of the conversation whose process died after its start (no end yet)
        cut = Sequencer("cut-turn", FixedClock("2099-01-01T00:00:00.000Z"))  # started last
        store.append(cut.seal([msgspec.structs.replace(started, request="the cut one",
                                                       history=[], history_dropped=0)]))
        second = await held.run("second")
        assert store.reads == [held.id]
        store.turns_read.clear()
        third = await held.run("third")
        assert store.reads == [held.id]  # still cut: nothing new
        assert store.turns_read == []  # its last seq tells, not its events
        # taken over elsewhere, it ends with an answer
        store.append(cut.seal([TurnEnded(rounds=1, stop="answered", answer="late answer")]))
        fourth = await held.run("fourth")
        assert store.reads == [held.id, held.id]
        assert [x.request for x in _sent(fourth)[0]] == ["second", "third", "the cut one"]
        assert _sent(fourth) == _from_the_store_before(store, held.id, fourth)
        assert second.ok and third.ok
    store.close()


def _from_the_store_before(store: SqliteStore, conversation_id: str,
                           result: TurnResult) -> tuple[list[Exchange], int]:
    """The history a read of the store gives for the turn `result` (its earlier turns only)."""
    earlier = [t for t in conversation_turns(SqliteStore.conversation(store, conversation_id))
               if t.turn_id != result.turn_id]
    return history(earlier, BUDGET)


async def test_a_larger_budget_makes_the_agent_read_the_store_again(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "s.db")
    async with run_simulator(any_model=True) as sim, _agent(sim, store) as agent:
        held = agent.conversation()
        for n in range(5):
            await held.run(f"step {n}")
        agent.settings = AgentSettings(history=HistoryBudget(max_exchanges=5))
        result = await held.run("step 5")
        assert store.reads == [held.id]
        assert [x.request for x in _sent(result)[0]] == [f"step {n}" for n in range(5)]
    store.close()
