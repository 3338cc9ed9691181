"""A store from what a user writes: a `postgresql://` (or `postgres://`) URL means a PostgreSQL
database, anything else a path to an SQLite file — the embedded default.

psycopg is imported only when a URL is opened: a program that keeps its turns in SQLite never
loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fuseforks.stores.postgres_sql import DatabaseUrl, is_database_url
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import OrderedStore

if TYPE_CHECKING:
    from fuseforks.stores.postgres import PostgresStore

Target = str | Path | DatabaseUrl
"""A store as a user names it: a URL (as text, or as the command line's `DatabaseUrl`) or a
path."""


def store_target(text: str) -> Path | DatabaseUrl:
    """What `text` names: a database URL (printed without its password) or a file."""
    return DatabaseUrl(text) if is_database_url(text) else Path(text)


def open_store(target: Target, *, read_only: bool = False) -> SqliteStore | PostgresStore:
    """Open the store at `target` for reading and appending (a context manager closes it);
    `read_only`: never write to it."""
    if isinstance(target, str):
        target = store_target(target)
    if isinstance(target, DatabaseUrl):
        from fuseforks.stores.postgres import PostgresStore

        return PostgresStore(target, read_only=read_only)
    return SqliteStore(target, read_only=read_only)


def open_ordered_store(url: str | DatabaseUrl) -> OrderedStore:
    """A store several processes write and a relay follows in commit order: the PostgreSQL
    database at `url`."""
    from fuseforks.stores.postgres import PostgresStore

    return PostgresStore(url)
