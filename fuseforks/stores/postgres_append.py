"""An append to the PostgreSQL store when the server can go away for a moment: how long it keeps
trying, and how a round whose commit went unanswered is settled.

A round is one statement, committed as its own transaction. A connection lost while it is
written leaves the round stored whole or not at all, and only the server knows which — once the
session it was sent on has stopped running it (a server process may not notice its client is
gone until it answers). The store waits for that on a new connection, then reads the round's
seqs back before it tries again (absent) or returns (stored as sent), within the store's
patience (`APPEND_PATIENCE`). A round that is tried again never lands twice: the turn's
primary key refuses a second copy, and a copy refused so is read back as the store's own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from fuseforks.core.backoff import Backoff

APPEND_PATIENCE = 15.0
"""Seconds an append whose connection was lost keeps trying on new connections (waiting 0.1 s,
then twice as long each time, at most 1 s) before it gives up: a server restart or a network
blip of a few seconds costs a turn nothing, and the turn keeps its place meanwhile. After that
the append fails and the turn stops before its next side effect."""
POOL_WAIT = 2.0
"""Seconds an append waits for a pooled connection before it tries on a new one (every pooled
connection may be broken at once, and the pool reconnects at its own pace)."""
INSERT_TIMEOUT = 5.0
"""Seconds an append's insert may run before the server cancels it (`statement_timeout` of the
store's writing sessions). An append is one statement, so this bounds how long one of the
store's transactions can hold followers back."""


APPEND_BACKOFF = Backoff(base=0.1, cap=1.0, budget=APPEND_PATIENCE)
"""The schedule of an append's tries on new connections; its budget is the store's patience."""


class Patience:
    """Tries again within `seconds` of the first failure: after 0.1 s, then twice as long each
    time, at most 1 s between tries (`APPEND_BACKOFF`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._retries = replace(APPEND_BACKOFF, budget=seconds).start()

    @property
    def tries(self) -> int:
        return self._retries.retries

    def left(self) -> float:
        return self._retries.left()

    def retry(self) -> bool:
        """Wait for the next try and say yes, or say no when it would come too late."""
        delay = self._retries.next()
        if delay is None:
            return False
        time.sleep(delay)
        return True


def connect_timeout(patience: Patience) -> int:
    """A connect timeout within what is left of an append's patience (libpq counts whole
    seconds, at least 2)."""
    return max(2, int(patience.left() + 0.999))


Outcome = Literal["stored", "refused", "raced", "cancelled", "unsent", "lost"]
"""What became of one try at an append's transaction:

- `stored`: the insert stored every event of the round;
- `refused`: it stored none, its check on the server refused it (the round does not continue
  the stored tail, or its lease's fence has moved on);
- `raced`: another writer stored events at its seqs meanwhile;
- `cancelled`: the server cancelled the insert (its statement timeout, an operator's cancel):
  nothing of the round is stored, and trying again would wait on the same thing;
- `unsent`: no connection came, so nothing of the round was sent;
- `lost`: the connection was lost once the round was sent, so it may be stored."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """How one try at an append's transaction went."""

    outcome: Outcome
    backend: int = 0
    """The server process of the session the round was sent on."""
    detail: str = ""
    """Why it was cancelled or lost, in one line without secrets."""

    @property
    def answered(self) -> bool:
        """The server answered it: the round is stored, or surely not."""
        return self.outcome not in ("unsent", "lost")


def settled(first: int, bodies: Sequence[str], rows: Sequence[Any]) -> bool | None:
    """Whether a round (its first seq, its bodies) is stored, from the rows stored at its seqs:
    True when they are its events as sent, False when there are none, None when they are
    someone else's."""
    if not rows:
        return False
    if [(seq, body) for seq, body in rows] == list(enumerate(bodies, start=first)):
        return True
    return None
