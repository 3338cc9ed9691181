"""Where the console reads: the one place it touches a store or a stream.

Every page reads through a `Reader` — the public reading methods of a store (`turns`, `read`,
`of_kinds`, `audit`, `digests`) — so a page never knows what holds the record:

- an SQLite file is opened read-only anew for every page. A read-only SQLite reader that found
  no write-ahead log opens the file as immutable and sees the store as it was when opened; a
  writer that starts later (`fuseforks run`) appends to its own log, which only a new reader
  sees. Opening costs well under a millisecond, and a page is then one consistent snapshot.
- a PostgreSQL database is opened once, read-only, and shared: each query sees what is committed.
- a JSON Lines stream is read whole, and read again when the file changes (its size or time).

Listing a large store's turns is the dearest read of a page (one pass over every event), and a
page asks for it every second while it follows the record. So the list is kept and asked again
only when the files may hold something new: an SQLite store's file or its write-ahead log changed
size or time, or a stream's file did. A database gives no such sign; its list is read each time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from fuseforks.events.codec import Envelope
from fuseforks.projections.audit import AuditFilter, AuditRows, audit_rows, digests, select
from fuseforks.stores.jsonl import group_turns, read_stream
from fuseforks.stores.open import open_store
from fuseforks.stores.postgres_sql import DatabaseUrl
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import TurnInfo

if TYPE_CHECKING:
    from fuseforks.stores.postgres import PostgresStore

Location = Path | DatabaseUrl
Stamp = tuple[int, ...]

_SQLITE_MAGIC = b"SQLite format 3\x00"


class Reader(Protocol):
    """What a page reads: the reading methods every store has."""

    def turns(self) -> list[TurnInfo]: ...

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]: ...

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]: ...

    def audit(self, where: AuditFilter) -> AuditRows: ...

    def digests(self, prefix: str) -> list[str]: ...


class StreamReader:
    """A JSON Lines stream as a `Reader`: its turns held in memory, the audit folded from them
    (the rows the stores' SQL is held equal to)."""

    def __init__(self, envelopes: Iterable[Envelope]) -> None:
        self._turns = group_turns(envelopes)
        self._audit = audit_rows(e for turn in self._turns.values() for e in turn)

    def turns(self) -> list[TurnInfo]:
        infos = [TurnInfo(turn_id=turn_id, events=len(turn), first_at=min(e.at for e in turn),
                          last_at=max(e.at for e in turn))
                 for turn_id, turn in self._turns.items()]
        return sorted(infos, key=lambda info: (info.first_at, info.turn_id))

    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        return [e for e in self._turns.get(turn_id, []) if e.seq > after]

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        wanted = set(kinds)
        found = [e for turn in self._turns.values() for e in turn if e.kind in wanted]
        return sorted(found, key=lambda e: (e.at, e.turn_id, e.seq))

    def audit(self, where: AuditFilter) -> AuditRows:
        return select(self._audit, where)

    def digests(self, prefix: str) -> list[str]:
        return sorted(d for d in digests(self._audit) if d.startswith(prefix))


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(16) == _SQLITE_MAGIC


class Record:
    """The record the console shows, opened read-only. Opening it reads it once, so a source
    that is missing, someone else's, damaged or from a newer fuseforks fails here, before the
    console serves anything (a `FuseforksError` or an `OSError`, each naming the source)."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self._lock = threading.Lock()
        self._database: SqliteStore | PostgresStore | None = None
        self._stream: tuple[Stamp, StreamReader] | None = None
        self._listed: tuple[Stamp, list[TurnInfo]] | None = None
        if isinstance(location, DatabaseUrl):
            self._database = open_store(location, read_only=True)
            self._file_kind = "database"
        elif _is_sqlite(location):
            self._file_kind = "sqlite"
        else:
            self._file_kind = "stream"
        with self.reading() as reader:
            self.turns(reader)

    @contextmanager
    def reading(self) -> Iterator[Reader]:
        """A reader for one page."""
        if self._database is not None:
            yield self._database
        elif self._file_kind == "sqlite":
            with open_store(self.location, read_only=True) as store:
                yield store
        else:
            yield self._stream_reader()

    def turns(self, reader: Reader) -> list[TurnInfo]:
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

    def _stream_reader(self) -> StreamReader:
        assert isinstance(self.location, Path)
        stamp = self._stamp()
        assert stamp is not None
        with self._lock:
            if self._stream is None or self._stream[0] != stamp:
                self._stream = (stamp, StreamReader(read_stream(self.location)))
            return self._stream[1]

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
