"""Where the console reads: the one place it touches a store or a stream.

`RecordSource` hands every page a store's `Record` — its public reading methods (`turns`, `read`,
`of_kinds`, `audit`, `digests`) — so a page never knows what holds the record:

- an SQLite file is opened read-only anew for every page. A read-only SQLite reader that found
  no write-ahead log opens the file as immutable and sees the store as it was when opened; a
  writer that starts later (`fuseforks run`) appends to its own log, which only a new reader
  sees. Opening costs well under a millisecond, and a page is then one consistent snapshot.
- a PostgreSQL database is opened once, read-only, and shared: each query sees what is committed.
- a JSON Lines stream is read whole, and read again when the file changes (its size or time).

Listing a large store's turns is the dearest read of a page, and a page asks for it every second
while it follows the record. So the list is kept and asked again only when
the files may hold something new: an SQLite store's file or its write-ahead log changed size or
time, or a stream's file did. A database gives no such sign; its list is read each time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fuseforks.stores.open import is_sqlite_file, open_record, open_store
from fuseforks.stores.store import Record, TurnInfo
from fuseforks.stores.urls import DatabaseUrl

Location = Path | DatabaseUrl
Stamp = tuple[int, ...]
"""What a page reads is a record (the store contract's reader tier): turns, read, of_kinds,
audit, digests."""


class RecordSource:
    """Where the record the console shows is read from, opened read-only: a `Record` for each
    page. Opening it reads the record once, so a source that is missing, someone else's, damaged
    or from a newer fuseforks fails here, before the console serves anything (a `FuseforksError`
    or an `OSError`, each naming the source)."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self._lock = threading.Lock()
        self._database: Record | None = None
        self._stream: tuple[Stamp, Record] | None = None
        self._listed: tuple[Stamp, list[TurnInfo]] | None = None
        if isinstance(location, DatabaseUrl):
            self._database = open_store(location, read_only=True)
            self._file_kind = "database"
        elif is_sqlite_file(location):
            self._file_kind = "sqlite"
        else:
            self._file_kind = "stream"
        with self.reading() as reader:
            self.turns(reader)

    @contextmanager
    def reading(self) -> Iterator[Record]:
        """A reader for one page."""
        if self._database is not None:
            yield self._database
        elif self._file_kind == "sqlite":
            with open_record(self.location) as store:
                yield store
        else:
            yield self._stream_reader()

    def turns(self, reader: Record) -> list[TurnInfo]:
        """`reader.turns()`, or the list read last time when the files have not changed since."""
        stamp = self._stamp()
        with self._lock:
            if stamp is not None and self._listed is not None and self._listed[0] == stamp:
                return self._listed[1]
        infos = reader.turns()
        if stamp is not None:
            with self._lock:
                self._listed = (stamp, infos)
        return infos

    def _stamp(self) -> Stamp | None:
        """What changes when the record's files do; None for a database."""
        if not isinstance(self.location, Path):
            return None
        files = [self.location]
        if self._file_kind == "sqlite":
            files.append(Path(f"{self.location}-wal"))
        stamp: list[int] = []
        for path in files:
            try:
                status = path.stat()
            except FileNotFoundError:
                stamp += [-1, -1, -1]
            else:
                stamp += [status.st_ino, status.st_size, status.st_mtime_ns]
        return tuple(stamp)

    def _stream_reader(self) -> Record:
        assert isinstance(self.location, Path)
        stamp = self._stamp()
        assert stamp is not None
        with self._lock:
            if self._stream is None or self._stream[0] != stamp:
                self._stream = (stamp, open_record(self.location))
            return self._stream[1]

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
