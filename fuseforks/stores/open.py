"""A store or a record from what a user writes: a `postgresql://` (or `postgres://`) URL means a
PostgreSQL database, anything else a path — an SQLite file (the embedded default) or, for
reading, a JSON Lines stream.

psycopg is imported only when a URL is opened: a program that keeps its turns in SQLite never
loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fuseforks.core.errors import StreamFormatError
from fuseforks.core.signatures import sniff_format
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import OrderedStore, Record
from fuseforks.stores.stream import StreamRecord
from fuseforks.stores.urls import DatabaseUrl, is_database_url

if TYPE_CHECKING:
    from fuseforks.stores.postgres import PostgresStore

Target = str | Path | DatabaseUrl
"""A store as a user names it: a URL (as text, or as the command line's `DatabaseUrl`) or a
path."""

SQLITE_MAGIC = b"SQLite format 3\x00"


def store_target(text: str) -> Path | DatabaseUrl:
    """What `text` names: a database URL (printed without its password) or a file."""
    return DatabaseUrl(text) if is_database_url(text) else Path(text)


def is_sqlite_file(path: Path) -> bool:
    """Whether the file at `path` holds an SQLite database (else it is read as a stream)."""
    with open(path, "rb") as handle:
        return handle.read(16) == SQLITE_MAGIC


def open_store(target: Target, *, read_only: bool = False) -> SqliteStore | PostgresStore:
    """Open the store at `target` for reading and appending (a context manager closes it);
    `read_only`: never write to it."""
    if isinstance(target, str):
        target = store_target(target)
    if isinstance(target, DatabaseUrl):
        from fuseforks.stores.postgres import PostgresStore

        return PostgresStore(target, read_only=read_only)
    return SqliteStore(target, read_only=read_only)


def inspect_store(target: Target) -> int:
    """The layout version of the store at `target`, read without writing anything: 0 where
    opening for writing would create the store. Raises for a file or a database fuseforks must
    not write to, or cannot reach."""
    if isinstance(target, str):
        target = store_target(target)
    if isinstance(target, DatabaseUrl):
        from fuseforks.stores.postgres import PostgresStore

        return PostgresStore.inspect(target)
    return SqliteStore.inspect(target)


def open_record(target: Target) -> Record:
    """Recorded turns to read, writing nothing: a store opened read-only, or a JSON Lines
    stream read whole."""
    if isinstance(target, str):
        target = store_target(target)
    if isinstance(target, Path) and not is_sqlite_file(target):
        with open(target, "rb") as handle:
            head = handle.read(4096)
        if head.strip() and not head.lstrip().startswith(b"{"):
            raise StreamFormatError(f"{target}: {_what_it_is(head)}, neither a fuseforks store "
                                    "(an SQLite database) nor an event stream (JSON Lines)")
        return StreamRecord(target)
    return open_store(target, read_only=True)


def _what_it_is(head: bytes) -> str:
    """A file's kind in a user's words, from its first bytes."""
    image = sniff_format(head)
    if image is not None:
        return f"a {image} image"
    if head.startswith(b"%PDF"):
        return "a PDF document"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 3:  # not a character cut by the 4 KiB read
            return "binary data"
    return "text"


def open_ordered_store(url: str | DatabaseUrl) -> OrderedStore:
    """A store several processes write and a relay follows in commit order: the PostgreSQL
    database at `url`."""
    from fuseforks.stores.postgres import PostgresStore

    return PostgresStore(url)
