"""Child processes die with fuseforks, whatever kills it — SIGKILL included.

A stdio MCP server or the demo's simulator is started through this file as a launcher:
`python -I -S leash.py PARENT_PID COMMAND ARGS...`. On Linux it asks the kernel to send the child
SIGKILL when its parent dies (`PR_SET_PDEATHSIG`, kept across `exec`), checks the parent is still
the one that started it (no race with an early death), then becomes COMMAND with `execvp`. On
other systems the launcher only execs; a stdio server still sees its stdin close when the parent
dies. This file imports nothing from fuseforks: it runs with `-S`, before any package is found.
"""

from __future__ import annotations

import os
import sys

_PR_SET_PDEATHSIG = 1
_SIGKILL = 9


def leashed(command: list[str]) -> list[str]:
    """`command` run through the launcher, bound to this process's life."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(os.getpid()), *command]


def _bind_to_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the binding took effect
        os._exit(1)


def main(argv: list[str]) -> None:
    parent, command = int(argv[1]), argv[2:]
    _bind_to_parent(parent)
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"cannot start {command[0]!r}: {error.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)
