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

A child whose exit status matters (an MCP server that dies before its handshake: the user wants
to know how it ended) is started with `exit_file`: the launcher then forks instead of becoming
COMMAND, binds the command to itself the same way, passes on the signals a supervisor sends, and
when the command ends writes how (`exit status 3`, `killed by signal 9`) to the file before it
exits itself — keeping the command's stdout open until then, so that whoever reads that stdout
sees its end only once the file is written.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
_SIGKILL = 9


def leashed(command: list[str], *, signal: int = _SIGKILL,
            exit_file: str | None = None) -> list[str]:
    """`command` run through the launcher, bound to this process's life: sent `signal` when it
    dies. `exit_file`: where the launcher writes how the command ended (see the module)."""
    parent = str(os.getpid()) if signal == _SIGKILL else f"{os.getpid()}:{signal}"
    if exit_file is not None:
        parent = f"{parent}={exit_file}"
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


def _exec(command: list[str]) -> None:
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"cannot start {command[0]!r}: {error.strerror}\n")
        os._exit(127)


def _ending(status: int) -> str:
    """How a child ended, as the file says it."""
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _run_and_report(command: list[str], signal: int, exit_file: str) -> None:
    """Run `command` as a child bound to this launcher, and write how it ended to `exit_file`."""
    import signal as signals

    launcher = os.getpid()
    child = os.fork()
    if child == 0:
        _bind_to_parent(launcher, signal)
        _exec(command)
    os.close(0)  # the command's stdin is the command's alone: its end is seen as its writer meant

    def pass_on(number: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, number)

    for number in (signals.SIGTERM, signals.SIGINT, signals.SIGHUP, signals.SIGQUIT):
        signals.signal(number, pass_on)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    written = f"{exit_file}.part"
    try:
        with open(written, "w", encoding="utf-8") as out:
            out.write(_ending(status) + "\n")
        os.replace(written, exit_file)
    except OSError:
        pass  # the report is a courtesy: the command's end is not delayed for it
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def main(argv: list[str]) -> None:
    binding, _, exit_file = argv[1].partition("=")
    parent, _, signal = binding.partition(":")
    command = argv[2:]
    _bind_to_parent(int(parent), int(signal or _SIGKILL))
    if exit_file:
        _run_and_report(command, int(signal or _SIGKILL), exit_file)
    _exec(command)


if __name__ == "__main__":
    main(sys.argv)
