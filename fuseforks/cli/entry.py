"""The `fuseforks` executable: the command group, with Ctrl-C and SIGTERM handled from the start.

Until a command installs its own handling (a turn records an interruption), a SIGINT or SIGTERM
ends the process at once with the shell's code for it (130, 143), no traceback, and one line that
says what had (not) started: before a command begins, nothing was done; a command may say what a
stop means while it prepares (`run`: nothing was sent or recorded yet).
"""

from __future__ import annotations

import os
import signal
from types import FrameType

_EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
_BEFORE = "before the command began: nothing was done"

_phase = _BEFORE


def stopping_means(text: str) -> None:
    """What a stop by signal means from now on, said after `stopped (SIGINT) ` ("" for nothing)."""
    global _phase
    _phase = text


def _stop(signum: int, frame: FrameType | None) -> None:
    said = f"stopped ({signal.Signals(signum).name}) {_phase}".rstrip()
    os.write(2, f"{said}\n".encode())
    os._exit(_EXIT_CODES[signum])


def install() -> None:
    """Ctrl-C and SIGTERM stop the process at once, with one line, from here on."""
    for signum in _EXIT_CODES:
        signal.signal(signum, _stop)


def main() -> None:
    install()
    from fuseforks.cli import main as group

    group()
