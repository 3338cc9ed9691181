"""A store from what a user writes: a path means an SQLite file."""

from __future__ import annotations

from pathlib import Path

from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import EventStore


def open_store(target: str | Path) -> EventStore:
    """Open the store at `target` for reading and appending (a context manager closes it)."""
    return SqliteStore(Path(target))
