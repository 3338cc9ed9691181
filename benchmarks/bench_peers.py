"""fuseforks beside the peer frameworks and the floor, on the same work in one run (`make bench-peers`).

The work is a warm turn: a request, the simulated model calls the demo camera (an MCP server over
stdio), the image goes back, the model answers naming the frame's colours (`peers/contenders.py`).
The contenders: the floor (the two HTTP requests with plain httpx and the tool call with the `mcp`
SDK, no framework), fuseforks' `Agent` on SQLite and on PostgreSQL (an embedded server), on the
Anthropic and the Responses wire, and the peers — pydantic-ai, openai-agents and LiteLLM, at the
versions `peers/requirements.txt` pins. Each runs in a process of its own; the phases take them in
turn, in a rotating order, so that the shared machine's load falls on all of them alike:

- warm turns one after another: wall and CPU per turn, the infrastructure's CPU beside them;
- throughput with `--inflight` turns running at once at a fixed provider latency;
- the imports a user of each writes, in a fresh process;
- memory: RSS every block of turns after a warm-up, its growth per turn (fuseforks also with
  every turn in one conversation);
- time to first token through `agent.stream` against the official SDKs' streaming helpers.

A contender that fails is reported with its error in every table it would be in, never dropped.
The figures are printed as Markdown tables (the README's), then the goals' verdicts.

It needs the peers installed beside fuseforks: run it through `make bench-peers`, which builds
`.venv-peers`. `--turns` (or `FUSEFORKS_PEERS_TURNS`) scales every phase for a short check.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import click

from benchmarks.peers.contenders import CONTENDERS
from benchmarks.peers.measure import descendants
from benchmarks.peers.phases import Figures, Row, Workers, imports, in_flight, memory, warm_turns
from benchmarks.peers.processes import REPO, Simulator
from benchmarks.peers.report import (
    flight_table,
    goals,
    imports_table,
    infrastructure_table,
    memory_goals,
    memory_table,
    ttft_table,
    turns_table,
)

TURNS_ENV = "FUSEFORKS_PEERS_TURNS"
ROWS = [Row(name, contender) for name, contender in CONTENDERS.items()]
MEMORY_ROWS = [*ROWS, Row("fuseforks-one", CONTENDERS["fuseforks"], one_conversation=True)]


class Stores:
    """Where each fuseforks row records: an SQLite file in a scratch folder, or a database of its
    own on one PostgreSQL server, started on first use (the embedded one the tests use)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made = 0
        self.server: object | None = None
        self.databases: list[str] = []
        self.postgres: list[int] = []
        """The server's processes (its postmaster and whatever started it), once started."""

    def of(self, row: Row) -> str:
        self.made += 1
        if row.contender.store == "sqlite":
            return str(self.folder / f"{row.key}-{self.made}.db")
        if row.contender.store != "postgres":
            return ""
        from tests.stores.server import Server, server

        if self.server is None:
            before = set(descendants(os.getpid()))
            self.server = server()
            self.postgres = [pid for pid in descendants(os.getpid()) if pid not in before]
        assert isinstance(self.server, Server)
        name = self.server.create_database()
        self.databases.append(name)
        return self.server.url(name)

    def database_pids(self) -> list[int]:
        """The PostgreSQL processes now: the server's and the backends serving the workers."""
        return [*self.postgres, *(p for pid in self.postgres for p in descendants(pid))]

    def close(self) -> None:
        if self.server is not None:
            from tests.stores.server import Server

            assert isinstance(self.server, Server)
            for name in self.databases:
                self.server.drop_database(name)


def with_workers(rows: list[Row], stores: Stores, latency: float,
                 phase: Callable[[Workers, Simulator], dict[str, Figures]]) -> dict[str, Figures]:
    simulator = Simulator(latency)
    workers = Workers(rows, simulator, stores.of)
    try:
        return phase(workers, simulator)
    finally:
        workers.close()
        simulator.close()


def time_to_first_token(runs: int, warmup: int) -> list[dict[str, dict[str, float]]] | str:
    """`peers.ttft` in a process of its own on a simulator of its own: one line per wire, or
    why it failed."""
    simulator = Simulator()
    try:
        done = subprocess.run([sys.executable, "-m", "benchmarks.peers.ttft", simulator.base_url,
                               str(runs), str(warmup)], cwd=REPO, capture_output=True,
                              text=True, timeout=1800)
    finally:
        simulator.close()
    if done.returncode:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def machine() -> str:
    return (f"{datetime.now(UTC):%Y-%m-%d}, {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}")


@click.command()
@click.option("--turns", type=int, envvar=TURNS_ENV, default=80, show_default=True,
              help="Measured warm turns per contender; the other phases scale with it.")
@click.option("--inflight", type=int, default=16, show_default=True,
              help="Turns running at once in the throughput phase.")
@click.option("--latency", type=float, default=0.05, show_default=True,
              help="The simulator's seconds per response in the throughput phase.")
@click.option("--memory-turns", type=int, default=0,
              help="Turns of the memory phase (default 25 × --turns, 2,000 at the default).")
@click.option("--trace", type=int, default=0,
              help="Also list the N lines of Python whose memory grew most (tracemalloc).")
@click.option("--phase", "phases", multiple=True,
              type=click.Choice(["turns", "flight", "imports", "memory", "ttft"]),
              help="Run only these phases (all by default).")
@click.option("--only", multiple=True, type=click.Choice([row.key for row in MEMORY_ROWS]),
              help="Run only these rows (every row by default; ratios need the floor's).")
def main(turns: int, inflight: int, latency: float, memory_turns: int, trace: int,
         phases: tuple[str, ...], only: tuple[str, ...]) -> None:
    """Measure fuseforks beside the peer frameworks and the floor; print Markdown tables."""
    chosen = set(phases) or {"turns", "flight", "imports", "memory", "ttft"}
    rows = [row for row in ROWS if not only or row.key in only]
    memory_rows = [row for row in MEMORY_ROWS if not only or row.key in only]
    warmup = max(2, turns // 8)
    memory_turns = memory_turns or 25 * turns
    block = max(1, memory_turns // 20)
    print(f"machine: {machine()}; {turns} measured warm turns per contender after {warmup}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="ff-peers-") as folder:
        stores = Stores(Path(folder))
        try:
            if "turns" in chosen:
                figures = with_workers(rows, stores, 0.0, lambda workers, simulator: warm_turns(
                    workers, simulator, warmup, turns, stores.database_pids()))
                print("\n### Warm turns, one after another\n")
                print(turns_table(rows, figures))
                print("\nWhere the rest of each turn's CPU went (per turn):\n")
                print(infrastructure_table(rows, figures), flush=True)
            flight: dict[str, Figures] = {}
            if "flight" in chosen:
                rounds = max(2, turns // 16)
                flight = with_workers(rows, stores, latency, lambda workers, _: in_flight(
                    workers, inflight, rounds, 4 * inflight))
                print(f"\n### {inflight} turns in flight, the simulator answering after "
                      f"{latency * 1000:.0f} ms ({rounds} bursts of {4 * inflight} turns)\n")
                print(flight_table(rows, flight), flush=True)
            if "imports" in chosen:
                print("\n### Imports, in a fresh process\n")
                print(imports_table(rows, imports(rows, max(3, turns // 8))), flush=True)
            if "memory" in chosen:
                grown = with_workers(memory_rows, stores, 0.0, lambda workers, _: memory(
                    workers, max(block, memory_turns // 10), memory_turns, block, trace))
                print(f"\n### Memory over {memory_turns} turns after a warm-up, RSS every "
                      f"{block} turns (each turn a new conversation unless it says otherwise)\n")
                print(memory_table(memory_rows, grown))
                for row in memory_rows:
                    for line in grown[row.key].notes:
                        print(f"    {row.key}: {line}")
                print("\n" + "\n".join(memory_goals(memory_rows, grown)), flush=True)
            measured: list[dict[str, dict[str, float]]] = []
            if "ttft" in chosen:
                first = time_to_first_token(max(10, turns), max(2, turns // 8))
                print("\n### Time to first token: `agent.stream` against the SDK's stream\n")
                if isinstance(first, str):
                    print(f"failed: {first}")
                else:
                    measured = first
                    print(ttft_table(measured))
            if "turns" in chosen:
                print("\n### Goals (medians against the floor)\n")
                print("\n".join(goals(rows, figures, flight, measured)))
        finally:
            stores.close()


if __name__ == "__main__":
    main()
