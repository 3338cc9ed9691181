"""Reducers are pure folds: `evolve(state, event) -> state`, and `fold` runs one over a history."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEvent

S = TypeVar("S")


def fold(
    evolve: Callable[[S, TurnEvent], S], initial: S, history: Iterable[Envelope] | Iterable[TurnEvent]
) -> S:
    """Fold a history of envelopes, or of bare events (one kind throughout)."""
    state = initial
    items = iter(history)
    first = next(items, None)
    if first is None:
        return state
    if isinstance(first, Envelope):
        state = evolve(state, first.event)
        for envelope in items:
            state = evolve(state, envelope.event)  # type: ignore[union-attr]
    else:
        state = evolve(state, first)
        for event in items:
            state = evolve(state, event)  # type: ignore[arg-type]
    return state
