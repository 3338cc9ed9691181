"""What an append changes in the read model: the fold carried from one append to the next.

A store writes an append's events and the read-model rows they change in one transaction. To
know what changed, it needs the turn's fold as it stood before the append: `RowCache` keeps it
for the turns that are running (a turn that ended is let go: nothing follows its end), and
folds a turn's stored events again when it has none — the first append of a turn another
process began, or after a restart. The fold it holds is always the fold of the stored prefix
the append continues: the append's own sequence check makes sure of it (a batch that continues a
tail the cache does not know folds the stored events first).

`prepare` folds the batch in and says which rows to write; the store calls `commit` once its
transaction has committed, and `forget` when it failed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import msgspec

from fuseforks.events.codec import Envelope
from fuseforks.projections.read_model import ReadRows, TurnRows, changed_rows, fold_rows

RUNNING_TURNS = 1024
"""Turns whose fold is kept between appends: more than a worker runs at once."""


class Prepared(msgspec.Struct, frozen=True, kw_only=True):
    """An append's effect on the read model: the rows to write, and the fold after it."""

    turn_id: str
    changes: ReadRows
    state: TurnRows


class RowCache:
    """The read model's fold of each running turn. Safe to share between threads."""

    def __init__(self, size: int = RUNNING_TURNS) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._turns: OrderedDict[str, TurnRows] = OrderedDict()

    def prepare(self, batch: Sequence[Envelope],
                stored: Callable[[str, int], list[Envelope]]) -> Prepared:
        """The rows `batch` changes. `stored(turn_id, last_seq)`: the turn's stored events up to
        that seq, read when the cache does not hold the turn's fold at the batch's start."""
        turn_id, first = batch[0].turn_id, batch[0].seq
        with self._lock:
            held = self._turns.get(turn_id)
        if held is None or held.last_seq != first - 1:
            held = fold_rows(stored(turn_id, first - 1)) if first > 1 else TurnRows()
        state = fold_rows(batch, held)
        return Prepared(turn_id=turn_id, changes=changed_rows(held, state), state=state)

    def commit(self, prepared: Prepared) -> None:
        """The append is stored: its fold is the turn's now (kept while the turn runs)."""
        with self._lock:
            if prepared.state.summary.stop != "cut":
                self._turns.pop(prepared.turn_id, None)
                return
            self._turns[prepared.turn_id] = prepared.state
            self._turns.move_to_end(prepared.turn_id)
            while len(self._turns) > self._size:
                self._turns.popitem(last=False)

    def forget(self, turn_id: str) -> None:
        """The append failed: what is stored is unknown here, read it again next time."""
        with self._lock:
            self._turns.pop(turn_id, None)

    def clear(self) -> None:
        with self._lock:
            self._turns.clear()
