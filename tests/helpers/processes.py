"""Every process a test starts dies with the test run, however the run ends.

The product binds its children to its own life with the launcher in `fuseforks/core/leash.py`
(`PR_SET_PDEATHSIG`); the tests bind theirs the same way, so a `make test` stopped by a timeout,
Ctrl-C or SIGKILL leaves no PostgreSQL, NATS, simulator or worker behind.

The kernel sends the signal when the *thread* that started the child ends, not the process, so
`spawn` starts long-lived children from one thread that lives as long as the test process (a
daemon thread: it is still there while `atexit` handlers stop the servers cleanly). `run` starts a
child and waits for it in the calling thread, which therefore outlives it. A child that runs as
another user (PostgreSQL refuses root) may not be able to reach this interpreter to run the
launcher, so it is bound by the same `prctl` call made in the child between its change of user
and its `exec`.

Scratch folders of servers are named after the test process (`ffpg-<pid>-…`); one left behind by
a killed run is removed by the next run that starts the same kind of server.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from fuseforks.core.leash import binder, leashed

__all__ = ["in_spawner_thread", "leashed", "run", "scratch_folder", "spawn", "stop"]

_work: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
_spawner: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    while True:
        start, future = _work.get()
        try:
            future.set_result(start())
        except BaseException as error:  # handed to the caller, who re-raises it
            future.set_exception(error)


def spawn(command: list[str], *, signal: int | None = None,
          **popen: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(command, **popen)`, leashed to this process (sent SIGKILL, or `signal`,
    when it dies) and started from the spawner thread."""
    if "user" in popen:
        bound = command
        popen["preexec_fn"] = binder() if signal is None else binder(signal=signal)
    else:
        bound = leashed(command) if signal is None else leashed(command, signal=signal)
    return in_spawner_thread(bound, **popen)


def _start_spawner() -> None:
    global _spawner
    with _lock:
        if _spawner is None:
            _spawner = threading.Thread(target=_serve, name="leashed-spawner", daemon=True)
            _spawner.start()


def in_spawner_thread(*args: Any, **popen: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(*args, **popen)` made from the spawner thread (a command that leashes
    itself, like `EmbeddedPostgres`, needs only the thread)."""
    _start_spawner()
    future: Future[subprocess.Popen[Any]] = Future()
    _work.put((lambda: subprocess.Popen(*args, **popen), future))
    return future.result()


def run(command: list[str], **options: Any) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(command, **options)`, leashed to this process."""
    return subprocess.run(leashed(command), **options)


def stop(process: subprocess.Popen[Any], grace: float = 10) -> None:
    """SIGTERM, then SIGKILL if `process` has not exited within `grace` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def scratch_folder(kind: str) -> Path:
    """A new temporary folder `<kind>-<pid>-…`, after removing those of test processes that are
    gone."""
    root = Path(tempfile.gettempdir())
    for left in root.glob(f"{kind}-*-*"):
        owner = left.name.split("-")[1]
        if owner.isdigit() and not _alive(int(owner)):
            shutil.rmtree(left, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-"))
