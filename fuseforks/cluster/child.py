"""Stopping a child the cluster started: its own signal first, SIGKILL after `timeout`."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any] | None, *, signum: int = signal.SIGTERM,
         timeout: float = 30.0) -> None:
    """Ask `process` to stop with `signum` and wait; kill it if it is still there after
    `timeout` seconds. Nothing to do for a process that is gone (or was never started)."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signum)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
