"""The provider simulator as the tests start it: `fuseforks simulator` in its own process,
leashed to the test run (`tests.helpers.processes`), used once it says where it listens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.helpers import processes

LISTENING = "simulator: listening on "


@contextmanager
def simulator(*options: str) -> Iterator[str]:
    """`fuseforks simulator --port 0 OPTIONS`: its base URL while it runs."""
    process = processes.spawn(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", *options],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    try:
        first = process.stdout.readline().strip()
        assert first.startswith(LISTENING), first
        yield first.removeprefix(LISTENING)
    finally:
        process.terminate()
        process.wait(timeout=60)
        process.stdout.close()
