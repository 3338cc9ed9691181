"""What the benchmark reads off processes (Linux `/proc`) and how it sums up a series of samples.

A contender measures its own wall and CPU time (its process's CPU clock counts every thread, the
ones that already ended too). The shared infrastructure — the simulator, each contender's camera,
the PostgreSQL server — is read from outside, from `/proc/PID/stat`, so that reading it costs the
contender nothing: clock ticks (1/100 s), summed over many turns before being divided.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of `/proc/PID/stat` after the command name (which may hold spaces)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # the process has ended
        return None
    return text[text.rindex(")") + 2:].split()


def parent_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def descendants(pid: int) -> list[int]:
    """Every living process below `pid` (children, their children...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            parent = parent_of(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU time of the processes `pids`, ended ones counting nothing more."""
    total = 0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


def rss_bytes(pid: int | None = None) -> int:
    """The resident set size of `pid` (this process by default) now."""
    statm = Path(f"/proc/{pid or 'self'}/statm").read_text().split()
    return int(statm[1]) * PAGE


@dataclass(frozen=True)
class Summary:
    """Min and median of a series (seconds, or whatever unit it was taken in)."""

    low: float
    median: float
    count: int

    @classmethod
    def of(cls, values: list[float]) -> Summary:
        return cls(min(values), statistics.median(values), len(values))


def slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of ys over xs: growth per unit of x, robust to one noisy sample."""
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
