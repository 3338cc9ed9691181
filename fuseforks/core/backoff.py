"""How long to wait before trying again: the one delay schedule every retry in fuseforks follows.

A `Backoff` waits `base` seconds after the first failure, twice as long after each further one,
at most `cap`; each delay may be scaled by a random factor in [1 - jitter, 1 + jitter]. It may
stop after a number of tries in all (`attempts`) and within a time budget (`budget`, seconds
from the start of a run, `Backoff.start`). Its users state their own numbers: the provider calls'
`RetryPolicy` (`fuseforks/wires/http.py`), the PostgreSQL store's append across a lost
connection (`fuseforks/stores/postgres_append.py`) and a worker's request delivered again
(`fuseforks/workers/worker.py`).

It only says how long; the caller waits (`time.sleep`, `anyio.sleep`, a message's redelivery).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

_MOST_DOUBLINGS = 1023
"""2.0 ** 1024 overflows a float; past this many doublings every delay is the cap anyway."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """Wait `base` seconds, then twice as long after each failure, at most `cap`.

    `jitter`: each delay drawn with a random number generator is scaled by a factor in
    [1 - jitter, 1 + jitter]. `attempts`: tries in all, the first included (None: no limit).
    `budget`: seconds a run (`start`) may last, a try never waited for past it (None: no
    limit)."""

    base: float
    cap: float
    jitter: float = 0.0
    attempts: int | None = None
    budget: float | None = None

    def delay(self, failures: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after `failures` failed tries (1 for the first): `base` doubled
        `failures - 1` times, at most `cap`, scaled by the jitter when `rng` is given."""
        doublings = min(max(failures - 1, 0), _MOST_DOUBLINGS)
        delay = min(self.base * 2.0 ** doublings, self.cap)
        if rng is None:
            return delay
        return delay * (1 + rng.uniform(-self.jitter, self.jitter))

    def allows(self, failures: int) -> bool:
        """Whether another try may follow `failures` failed ones (within `attempts`)."""
        return self.attempts is None or failures < self.attempts

    def start(self, clock: Callable[[], float] = time.monotonic) -> Retries:
        """A run of this schedule, its budget counted from now."""
        return Retries(self, clock)


class Retries:
    """One run of a `Backoff`: how many tries it has waited for, and its budget's deadline."""

    def __init__(self, backoff: Backoff, clock: Callable[[], float] = time.monotonic) -> None:
        self.backoff = backoff
        self.retries = 0
        """Tries waited for so far (each after a failure)."""
        self._clock = clock
        self._deadline = math.inf if backoff.budget is None else clock() + backoff.budget

    def left(self) -> float:
        """Seconds left of the budget (infinite without one)."""
        return max(0.0, self._deadline - self._clock())

    def next(self, rng: random.Random | None = None) -> float | None:
        """The seconds to wait before trying again after one more failure, or None when there
        is no other try: the attempts are spent, or the wait would end past the budget."""
        failures = self.retries + 1
        if not self.backoff.allows(failures):
            return None
        delay = self.backoff.delay(failures, rng)
        if self._clock() + delay > self._deadline:
            return None
        self.retries = failures
        return delay
