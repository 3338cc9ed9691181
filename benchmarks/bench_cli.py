"""How long a user waits for `fuseforks --help`, against the interpreter's own start.

The command imports no subcommand, no MCP SDK and no HTTP client to print its help (the test
suite checks *what* is imported; this measures what it costs). Side by side, interleaved:
`python -c pass` (the floor: an interpreter that imports nothing), `python -c "import click"`
(the CLI library alone) and the installed `fuseforks --help`. Best and median of the runs; the
goal is under half a second for `--help` on this 2-core machine.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 15
GOAL = 0.5


def contenders() -> dict[str, list[str]]:
    executable = Path(sys.executable).parent / "fuseforks"
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python -c 'import click'": [sys.executable, "-c", "import click"],
        "fuseforks --help": [str(executable), "--help"],
    }


def main() -> None:
    timings: dict[str, list[float]] = {name: [] for name in contenders()}
    for _ in range(RUNS):
        for name, command in contenders().items():
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            timings[name].append(time.perf_counter() - started)
    floor = min(timings["python -c pass"])
    for name, times in timings.items():
        print(f"{name:28} best {min(times) * 1000:7.1f} ms  median "
              f"{statistics.median(times) * 1000:7.1f} ms  best/floor {min(times) / floor:5.2f}x")
    best = min(timings["fuseforks --help"])
    verdict = "met" if best < GOAL else "MISSED"
    print(f"goal: fuseforks --help under {GOAL:g} s (best of {RUNS}): {verdict}")


if __name__ == "__main__":
    main()
