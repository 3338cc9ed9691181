"""A folder mounted read-only, for one process: the command runs in a mount namespace of its own
(`unshare -m`; with `-r` when not root) where the folder is bound read-only over itself, so the
test's own view of the folder — and the machine's — never changes, whatever happens."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_BIND_READ_ONLY = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'


def run_on_read_only(folder: Path, *command: str, **run: object) -> subprocess.CompletedProcess[str]:
    """`command` run with `folder` read-only, its output captured as text."""
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    return subprocess.run([*unshare, "sh", "-c", _BIND_READ_ONLY, str(folder), *command],
                          capture_output=True, text=True, timeout=120, check=False, **run)  # type: ignore[call-overload]


def fuseforks_on_read_only(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`fuseforks ARGS` with `folder` read-only."""
    return run_on_read_only(folder, sys.executable, "-m", "fuseforks", *args)
