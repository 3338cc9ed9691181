"""`make bench`: run every benchmark module (or those named on the command line).

Each module runs in its own interpreter, so one benchmark's heap (a 10,000-turn store, large
images) cannot slow the garbage collector of the next.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import benchmarks

OWN_VENV = {"bench_peers"}
"""Benchmarks that need packages of their own (`make bench-peers` builds their venv): run only
when named."""


def main(argv: list[str]) -> int:
    names = argv or sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__)
        if m.name.startswith("bench_") and m.name not in OWN_VENV
    )
    failed = 0
    for name in names:
        print(f"== {name} ==", flush=True)
        code = subprocess.call([sys.executable, "-c",
                                f"from benchmarks.{name} import main; main()"])
        failed += code != 0
        print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
