"""Reducers are pure folds: `evolve(state, event) -> state`, and `fold` runs one over a history."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEvent

S = TypeVar("S")


def fold(evolve: Callable[[S, TurnEvent], S], initial: S, history: Iterable[Envelope | TurnEvent]) -> S:
    state = initial
    for item in history:
        state = evolve(state, item.event if isinstance(item, Envelope) else item)
    return state
