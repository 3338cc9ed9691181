"""How long a key-value entry has stood still, by this process's own clock.

A process that renews an entry (the relay its lease, a worker its sign of life) writes a new
revision each time. Another process cannot read the writer's clock, and must not compare two
machines' clocks; what it can tell is how long, by its own monotonic clock, it has seen the same
revision. The writer sent that revision before anyone saw it, so the time seen is never more than
the time since the writer's last write: an entry seen unchanged for N seconds has not been
renewed for at least N seconds.
"""

from __future__ import annotations

import time


class Sightings:
    """The revision last seen of each key, and when it was first seen."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[int, float]] = {}

    def still(self, key: str, revision: int, now: float | None = None) -> float:
        """Seconds `key` has been seen at `revision` (0 the first time it is)."""
        now = time.monotonic() if now is None else now
        seen = self._seen.get(key)
        if seen is None or seen[0] != revision:
            self._seen[key] = (revision, now)
            return 0.0
        return now - seen[1]

    def forget(self, *keep: str) -> None:
        """Forget every key but `keep` (those no longer there)."""
        self._seen = {key: seen for key, seen in self._seen.items() if key in keep}
