"""Why a file cannot be written, in the words a user acts on.

The system answers a write to a read-only mount (a container's read-only volume, a snapshot, a
disk remounted read-only after errors) the way it answers a file another user owns — `os.access`
says no either way, SQLite says "unable to open database file". Changing a file's mode does not
help with the first, so the two are told apart by asking the file system itself.
"""

from __future__ import annotations

import os
from pathlib import Path


def on_read_only_mount(path: Path) -> bool:
    """Whether `path`, or the nearest of its folders that exists, is on a file system mounted
    read-only."""
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return bool(os.statvfs(probe).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def write_refusal(path: Path) -> str:
    """Why `path` cannot be written, when it cannot: its mount, or else its permissions."""
    return "read-only file system" if on_read_only_mount(path) else "permission denied"
