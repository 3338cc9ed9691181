"""A conversation as a projection of the store: its turns, and the history the next turn sends.

A conversation is the turns that share a `conversation_id`. What the next turn sends of them is
text only: the request and the final answer of each earlier turn that ended with an answer, in
order — never a tool call, a tool result, an image or a note. Tool images live for one turn.
A turn without an answer (failed, interrupted, cut) is left out: its request alone would read as
a question the model ignored.

The history grows with every turn, so a budget bounds it: at most `max_exchanges` exchanges and
`max_chars` characters of request and answer text, the oldest dropped first. What was dropped is
recorded on the turn (`TurnStarted.history_dropped`), so the decision is part of the record.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from fuseforks.core.errors import ConfigError
from fuseforks.events.codec import Envelope
from fuseforks.events.types import Exchange, TurnEnded, TurnStarted
from fuseforks.projections.audit import TurnStop


class HistoryBudget(msgspec.Struct, frozen=True, kw_only=True):
    max_exchanges: int = 16
    max_chars: int = 32_000

    def __post_init__(self) -> None:
        if self.max_exchanges < 0 or self.max_chars < 0:
            raise ConfigError("a history budget is not negative")


class ConversationTurn(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    at: str
    agent: str
    request: str
    answer: str
    stop: TurnStop


def conversation_turns(envelopes: Iterable[Envelope]) -> list[ConversationTurn]:
    """The turns of a conversation from their `TurnStarted` and `TurnEnded`, in order of start."""
    started: dict[str, tuple[str, TurnStarted]] = {}
    ended: dict[str, TurnEnded] = {}
    for envelope in envelopes:
        event = envelope.event
        if isinstance(event, TurnStarted):
            started[envelope.turn_id] = (envelope.at, event)
        elif isinstance(event, TurnEnded):
            ended[envelope.turn_id] = event
    turns = []
    for turn_id, (at, start) in sorted(started.items(), key=lambda item: (item[1][0], item[0])):
        end = ended.get(turn_id)
        turns.append(ConversationTurn(
            turn_id=turn_id, at=at, agent=start.agent, request=start.request,
            answer=end.answer if end else "", stop=end.stop if end else "cut"))
    return turns


class ConversationTail(msgspec.Struct, frozen=True, kw_only=True):
    """What the next turn's history needs of a conversation, and no more: how many turns it has,
    how many of them were answered, and the answered turns the budget can still send. An agent
    that holds a conversation folds each of its turns in, instead of reading every earlier turn
    back from the store before each new one (a read that grows with the conversation, in time
    and in memory)."""

    budget: HistoryBudget = HistoryBudget()
    """The budget the tail was kept for: under another one, it must be made again."""
    turns: int = 0
    answered: int = 0
    recent: tuple[ConversationTurn, ...] = ()
    """The newest answered turns that fit the budget, oldest first: exactly what the next turn
    sends."""
    open: tuple[tuple[str, int], ...] = ()
    """Turns without an end (cut), each with its last seq as seen: a takeover may still end one
    with an answer, which a new last seq tells."""


def conversation_tail(turns: Iterable[ConversationTurn], budget: HistoryBudget) -> ConversationTail:
    """The tail of a conversation's turns (in order of start). A cut turn's last seq is not
    known from its start and end: 0, until the caller looks."""
    tail = ConversationTail(budget=budget)
    for turn in turns:
        tail = with_turn(tail, turn)
    return tail


def with_turn(tail: ConversationTail, turn: ConversationTurn, last_seq: int = 0,
              ) -> ConversationTail:
    """The tail once `turn`, the conversation's newest, is added (`last_seq`: its last seq)."""
    open_ = (*tail.open, (turn.turn_id, last_seq)) if turn.stop == "cut" else tail.open
    if not turn.answer:
        return msgspec.structs.replace(tail, turns=tail.turns + 1, open=open_)
    return msgspec.structs.replace(tail, turns=tail.turns + 1, answered=tail.answered + 1,
                                   recent=_fitting((*tail.recent, turn), tail.budget), open=open_)


def _fitting(turns: tuple[ConversationTurn, ...],
             budget: HistoryBudget) -> tuple[ConversationTurn, ...]:
    """The newest of `turns` that the budget sends: counted back from the newest, up to the
    first that would pass a limit."""
    kept = 0
    chars = 0
    for turn in reversed(turns):
        size = len(turn.request) + len(turn.answer)
        if kept >= budget.max_exchanges or chars + size > budget.max_chars:
            break
        kept += 1
        chars += size
    return turns[len(turns) - kept:]


def history(turns: Iterable[ConversationTurn], budget: HistoryBudget) -> tuple[list[Exchange], int]:
    """The exchanges the next turn sends, and how many answered turns the budget left out."""
    return tail_history(conversation_tail(turns, budget))


def tail_history(tail: ConversationTail) -> tuple[list[Exchange], int]:
    """`history` from a conversation's tail, under the budget it was kept for."""
    kept = [Exchange(turn_id=t.turn_id, request=t.request, answer=t.answer) for t in tail.recent]
    return kept, tail.answered - len(kept)
