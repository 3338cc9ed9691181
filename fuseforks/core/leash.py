"""Child processes die with fuseforks, whatever kills it — SIGKILL included.

A stdio MCP server or the demo's simulator is started through this file as a launcher:
`python -I -S leash.py PARENT_PID[:SIGNAL] COMMAND ARGS...`. On Linux it asks the kernel to send
the child SIGKILL (or SIGNAL) when its parent dies (`PR_SET_PDEATHSIG`, kept across `exec`), checks
the parent is still the one that started it (no race with an early death), then becomes COMMAND
with `execvp`. A server that must clean up after itself (PostgreSQL removes its shared memory on
SIGQUIT, not on SIGKILL) is given its own signal. On other systems the launcher only execs; a
stdio server still sees its stdin close when the parent dies. This file imports nothing from
fuseforks: it runs with `-S`, before any package is found.

The kernel ties the signal to the *thread* that started the child: start a long-lived child from
a thread that lives as long as the process (the main thread, or the event loop's). A child that
runs as another user (PostgreSQL refuses root) may be unable to reach this interpreter to run the
launcher; `binder` gives the same binding as a `preexec_fn`, made in the child after its change
of user (a change of credentials clears the binding, so it must come after).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
_SIGKILL = 9


def leashed(command: list[str], *, signal: int = _SIGKILL) -> list[str]:
    """`command` run through the launcher, bound to this process's life: sent `signal` when it
    dies."""
    parent = str(os.getpid()) if signal == _SIGKILL else f"{os.getpid()}:{signal}"
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), parent, *command]


def binder(*, signal: int = _SIGKILL) -> Callable[[], None]:
    """A `preexec_fn` binding the child to this process's life (see the module's docstring)."""
    if sys.platform.startswith("linux"):
        # Imported here, in the parent: the child runs the binding after its change of user, and
        # that user may not be allowed to read this interpreter's modules (one installed under
        # root's home, say) — an import there fails the start.
        import ctypes  # noqa: F401
    parent = os.getpid()
    return lambda: _bind_to_parent(parent, signal)


def _bind_to_parent(parent: int, signal: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the binding took effect
        os._exit(1)


def main(argv: list[str]) -> None:
    parent, _, signal = argv[1].partition(":")
    command = argv[2:]
    _bind_to_parent(int(parent), int(signal or _SIGKILL))
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"cannot start {command[0]!r}: {error.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)
