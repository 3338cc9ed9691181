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

from fuseforks.events.codec import Envelope
from fuseforks.events.types import Exchange, TurnEnded, TurnStarted
from fuseforks.projections.audit import TurnStop


class HistoryBudget(msgspec.Struct, frozen=True, kw_only=True):
    max_exchanges: int = 16
    max_chars: int = 32_000

    def __post_init__(self) -> None:
        if self.max_exchanges < 0 or self.max_chars < 0:
            raise ValueError("a history budget is not negative")


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
    how many of them were answered, and the last answered ones, as many as a budget can send.
    An agent that holds a conversation folds each of its turns in, instead of reading every
    earlier turn back from the store before each new one (a read that grows with the
    conversation, in time and in memory)."""

    turns: int = 0
    answered: int = 0
    recent: tuple[ConversationTurn, ...] = ()
    """The last answered turns, oldest first: at most the `keep` the tail was made with."""
    open: tuple[str, ...] = ()
    """Turns without an end (cut): a takeover may still end one with an answer."""


def conversation_tail(turns: Iterable[ConversationTurn], keep: int) -> ConversationTail:
    """The tail of a conversation's turns (in order of start), keeping `keep` answered ones."""
    tail = ConversationTail()
    for turn in turns:
        tail = with_turn(tail, turn, keep)
    return tail


def with_turn(tail: ConversationTail, turn: ConversationTurn, keep: int) -> ConversationTail:
    """The tail once `turn`, the conversation's newest, is added."""
    open_ = (*tail.open, turn.turn_id) if turn.stop == "cut" else tail.open
    if not turn.answer:
        return msgspec.structs.replace(tail, turns=tail.turns + 1, open=open_)
    recent = (*tail.recent, turn)[-keep:] if keep else ()
    return ConversationTail(turns=tail.turns + 1, answered=tail.answered + 1, recent=recent,
                            open=open_)


def history(turns: Iterable[ConversationTurn], budget: HistoryBudget) -> tuple[list[Exchange], int]:
    """The exchanges the next turn sends, and how many answered turns the budget left out."""
    return tail_history(conversation_tail(turns, budget.max_exchanges), budget)


def tail_history(tail: ConversationTail, budget: HistoryBudget) -> tuple[list[Exchange], int]:
    """`history` from a conversation's tail (kept with at least `budget.max_exchanges`)."""
    kept: list[Exchange] = []
    chars = 0
    for turn in reversed(tail.recent):
        size = len(turn.request) + len(turn.answer)
        if len(kept) >= budget.max_exchanges or chars + size > budget.max_chars:
            break
        kept.append(Exchange(turn_id=turn.turn_id, request=turn.request, answer=turn.answer))
        chars += size
    kept.reverse()
    return kept, tail.answered - len(kept)
