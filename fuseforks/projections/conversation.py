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


def history(turns: Iterable[ConversationTurn], budget: HistoryBudget) -> tuple[list[Exchange], int]:
    """The exchanges the next turn sends, and how many answered turns the budget left out."""
    answered = [Exchange(turn_id=t.turn_id, request=t.request, answer=t.answer)
                for t in turns if t.answer]
    kept: list[Exchange] = []
    chars = 0
    for exchange in reversed(answered):
        size = len(exchange.request) + len(exchange.answer)
        if len(kept) >= budget.max_exchanges or chars + size > budget.max_chars:
            break
        kept.append(exchange)
        chars += size
    kept.reverse()
    return kept, len(answered) - len(kept)
