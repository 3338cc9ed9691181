"""The benchmark's phases, each over every contender, interleaved so that a change in the shared
machine's load falls on all of them alike: round after round, each contender takes its turn (one
turn, a burst, a block of turns, one import), in an order that rotates from round to round.

A contender that fails is reported with its error from then on, never dropped; its figures up to
the failure are kept but not summarised.
"""

from __future__ import annotations

import collections
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from benchmarks.peers.contenders import Contender, Settings
from benchmarks.peers.measure import cpu_seconds, slope
from benchmarks.peers.processes import Simulator, Worker, WorkerFailed, time_imports
from fuseforks.demo.camera import PALETTE, frame_colours

_T = TypeVar("_T")
NO_IMAGE = "I received the tool result; it has no image."
"""What the simulator answers when the tool result it was sent carries no image."""
_COLOURS = re.compile(r"left half (\w+), right half (\w+)")
FRAMES = {frame_colours(seq) for seq in range(1, len(PALETTE) + 1)}


def seen(answer: str) -> str:
    """What an answer shows: `image` (it names a frame's colours: the pixels reached the model),
    `no image` (the model got the tool result without its image), or `other`."""
    named = _COLOURS.search(answer)
    if named and (named[1], named[2]) in FRAMES:
        return "image"
    return "no image" if NO_IMAGE in answer else "other"


@dataclass(frozen=True)
class Row:
    """A line of the tables: a contender, and how it is run."""

    key: str
    contender: Contender
    one_conversation: bool = False

    @property
    def label(self) -> str:
        return self.contender.label + (", one conversation" if self.one_conversation else "")


@dataclass
class Figures:
    """What one phase measured of one row; `error` once it failed."""

    error: str = ""
    answers: collections.Counter[str] = field(default_factory=collections.Counter)
    values: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    totals: dict[str, float] = field(default_factory=lambda: collections.defaultdict(float))
    notes: list[str] = field(default_factory=list)

    def delivered(self) -> str:
        """`image` when every answer showed the image; else what the answers showed, counted."""
        kinds: collections.Counter[str] = collections.Counter()
        for answer, count in self.answers.items():
            kinds[seen(answer)] += count
        if set(kinds) == {"image"}:
            return "image"
        return ", ".join(f"{kind} {count}" for kind, count in kinds.most_common()) or "-"


def rotated(items: Sequence[_T], turn: int) -> Iterator[_T]:
    for n in range(len(items)):
        yield items[(turn + n) % len(items)]


class Workers:
    """One worker per row, started on `simulator`; the rows' stores come from `store_of`."""

    def __init__(self, rows: list[Row], simulator: Simulator,
                 store_of: Callable[[Row], str]) -> None:
        self.rows = rows
        self.workers: dict[str, Worker] = {}
        self.figures = {row.key: Figures() for row in rows}
        for row in rows:
            try:
                db = store_of(row)
            except Exception as error:  # the store could not be made: the row's error
                self.figures[row.key].error = f"{type(error).__name__}: {error}"
                continue
            settings = Settings(simulator.base_url, db=db, one_conversation=row.one_conversation)
            worker = Worker(row.contender, settings)
            self.workers[row.key] = worker
            if worker.error:
                self.figures[row.key].error = worker.error

    def alive(self) -> list[tuple[Row, Worker]]:
        return [(row, self.workers[row.key]) for row in self.rows
                if row.key in self.workers and not self.figures[row.key].error]

    def ask(self, row: Row, op: str, **fields: Any) -> dict[str, Any] | None:
        """The worker's answer, or None once it failed (the error is kept)."""
        try:
            return self.workers[row.key].ask(op, **fields)
        except WorkerFailed as failure:
            self.figures[row.key].error = str(failure)
            return None

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()


def warm_turns(workers: Workers, simulator: Simulator, warmup: int, turns: int,
               database: list[int]) -> dict[str, Figures]:
    """Sequential warm turns: wall and CPU per turn (the CPU from one turn's start to the next's),
    the infrastructure's CPU in each turn's window, the peak RSS at the end."""
    cpu_starts: dict[str, list[float]] = collections.defaultdict(list)
    for round_ in range(warmup + turns):
        for row, worker in rotated(workers.alive(), round_):
            figures = workers.figures[row.key]
            simulator_before, camera_before = simulator.cpu(), worker.infra_cpu()
            database_before = cpu_seconds(database) if row.contender.store == "postgres" else 0
            answer = workers.ask(row, "turn")
            if answer is None or round_ < warmup:
                continue
            figures.answers[answer["answer"]] += 1
            figures.values["wall"].append(answer["wall"])
            figures.values["cpu_inside"].append(answer["cpu"])
            cpu_starts[row.key].append(answer["cpu_start"])
            figures.totals["simulator"] += simulator.cpu() - simulator_before
            figures.totals["camera"] += worker.infra_cpu() - camera_before
            if row.contender.store == "postgres":
                figures.totals["database"] += cpu_seconds(database) - database_before
    for row, _ in workers.alive():
        stats = workers.ask(row, "stats")
        if stats is None:
            continue
        figures = workers.figures[row.key]
        marks = [*cpu_starts[row.key], stats["cpu"]]
        figures.values["cpu"] = [after - before for before, after in itertools.pairwise(marks)]
        figures.totals["peak_rss"] = stats["peak_rss"]
    return workers.figures


def in_flight(workers: Workers, inflight: int, rounds: int, turns: int) -> dict[str, Figures]:
    """Throughput: bursts of `turns` turns with `inflight` running at once, after one burst of
    warm-up; turns per second of each burst."""
    for row, _ in workers.alive():
        workers.ask(row, "burst", turns=inflight, inflight=inflight)
    for round_ in range(rounds):
        for row, _ in rotated(workers.alive(), round_):
            answer = workers.ask(row, "burst", turns=turns, inflight=inflight)
            if answer is None:
                continue
            figures = workers.figures[row.key]
            figures.answers.update(answer["answers"])
            if answer["errors"]:
                figures.error = "; ".join(f"{count}x {error}"
                                          for error, count in answer["errors"].items())
                continue
            figures.values["rate"].append(turns / answer["elapsed"])
    for row, _ in workers.alive():
        stats = workers.ask(row, "stats")
        if stats is not None:
            workers.figures[row.key].totals["peak_rss"] = stats["peak_rss"]
    return workers.figures


def imports(rows: list[Row], runs: int) -> dict[str, Figures]:
    """Each contender's imports in a fresh process, `runs` times, interleaved."""
    figures = {row.key: Figures() for row in rows}
    for round_ in range(runs):
        for row in rotated(rows, round_):
            if figures[row.key].error:
                continue
            taken = time_imports(row.contender)
            if isinstance(taken, str):
                figures[row.key].error = taken
            else:
                figures[row.key].values["imports"].append(taken)
    return figures


def memory(workers: Workers, warmup: int, turns: int, block: int,
           trace: int) -> dict[str, Figures]:
    """RSS after a full collection, every `block` sequential turns, over `turns` turns after
    `warmup`; growth per turn is the least-squares slope. With `trace`, the `trace` lines of
    Python code whose memory grew most over the measured turns (tracemalloc, which slows the
    turns and adds its own memory: a separate run from the figures)."""
    for row, _ in workers.alive():
        workers.ask(row, "run", turns=warmup)
    for row, _ in workers.alive():
        if trace:
            workers.ask(row, "trace")
        sample = workers.ask(row, "sample")
        if sample is not None:
            workers.figures[row.key].values["rss"].append(sample["rss"])
            workers.figures[row.key].values["at"].append(0)
    for round_ in range(turns // block):
        for row, _ in rotated(workers.alive(), round_):
            answer = workers.ask(row, "run", turns=block)
            sample = workers.ask(row, "sample") if answer is not None else None
            if answer is None or sample is None:
                continue
            figures = workers.figures[row.key]
            figures.answers.update(answer["answers"])
            figures.values["rss"].append(sample["rss"])
            figures.values["at"].append((round_ + 1) * block)
    for row, _ in workers.alive():
        figures = workers.figures[row.key]
        figures.totals["growth"] = slope(figures.values["at"], figures.values["rss"])
        if trace:
            top = workers.ask(row, "trace", top=trace)
            figures.notes = top["top"] if top else []
    return workers.figures
