"""The `fuseforks` executable: the command group, with Ctrl-C and SIGTERM handled from the start.

Until a command installs its own handling (a turn records an interruption), a SIGINT or SIGTERM
ends the process at once with the shell's code for it (130, 143) and no traceback: nothing has
been sent or recorded yet that a clean stop would have to finish.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

_EXIT_CODES: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _stop(signum: int, frame: FrameType | None) -> None:
    os._exit(_EXIT_CODES[signum])


def main() -> None:
    for signum in _EXIT_CODES:
        signal.signal(signum, _stop)
    from fuseforks.cli import main as group

    group()
