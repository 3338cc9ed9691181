"""`make bench`: run every benchmark module (or those named on the command line) in one process."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks


def main(argv: list[str]) -> int:
    names = argv or sorted(
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    )
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== {name} ==", flush=True)
        module.main()
        print(flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
