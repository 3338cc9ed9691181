"""`fuseforks console` as a user starts it: a real process, on a free port of 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import processes

SERVING = "console: serving "


def environment(**extra: str) -> dict[str, str]:
    """The test's environment without provider keys or a console token, plus `extra`."""
    kept = {k: v for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and k != "FUSEFORKS_CONSOLE_TOKEN"}
    return kept | extra


def start(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """`fuseforks console ARGS --port 0`, once it serves: the process and its address."""
    console = processes.spawn(
        [sys.executable, "-m", "fuseforks", "console", *args, "--port", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env or environment())
    assert console.stdout is not None
    line = console.stdout.readline()
    if not line.startswith(SERVING):
        console.kill()
        _, errors = console.communicate(timeout=30)
        raise AssertionError(f"the console did not serve: {line!r} {errors!r}")
    return console, line.strip().rsplit(" on ", 1)[1]


def stop(console: subprocess.Popen[str], signum: int = signal.SIGTERM) -> tuple[int, str, str]:
    """Its exit code and the rest of what it printed, after `signum`."""
    console.send_signal(signum)
    out, errors = console.communicate(timeout=60)
    return console.returncode, out, errors


@contextmanager
def serving(source: Path | str, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    console, url = start(str(source), *args, env=env)
    try:
        yield url
    finally:
        code, _, errors = stop(console)
        assert (code, errors) == (0, ""), errors
