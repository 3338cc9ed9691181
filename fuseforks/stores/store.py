"""The store contract, in tiers: each caller depends on the tier it needs, each store implements
the tiers it can (as `eventsourcing` separates its aggregate, application and tracking recorders).

- `TurnLog`: a turn's events in order — append one unit of work, read, the last seq. What the
  store writer (`fuseforks.bus.subscribers.StoreWriter`) and an import need.
- `Record`: recorded turns for a reader — every turn, one turn's events, a conversation's starts
  and ends, the events of some kinds, and the audit. What the commands that read (`turns`, `log`,
  `audit`, `replay`, `export`) and the agent need. Only `read` and `turns` are the store's own:
  the rest is written here once, over those two, and an SQL store answers them with its SQL.
- `EventStore`: both, a store that is read and written (`MemoryStore`, `SqliteStore`,
  `PostgresStore`). A JSON Lines stream (`StreamRecord`) is a `Record` only.
- `OrderedRecord`: a record several processes write, followed in commit order (the relay to the
  message bus, `fuseforks.jetstream.relay`); `OrderedStore` is such a record that is also a
  store (what a worker runs turns on): `PostgresStore`.

Who owns a turn, or the relay, is a lease (`fuseforks.stores.leases`, held through
`fuseforks.jetstream.lease`); an `OrderedStore`'s part is the fence its appends can carry.

The contract is synchronous: a store's calls run off the event loop, in worker threads
(`anyio.to_thread`), and the turns of one agent may call it from several threads at once; the
SQL stores are safe to share between threads. One call is made on the loop itself:
`append_now`, which a store answers only when it can commit without waiting (SQLite, memory), so
that the write-ahead commit before each side effect costs no hand-off to a thread.

An append is one unit of work — the engine appends a round at a time — and must continue the
turn's sequence exactly: the first envelope's seq is the turn's last seq + 1 and the rest follow
without gaps. That check doubles as the optimistic-concurrency guard.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Self

import msgspec

from fuseforks.core.errors import ConcurrencyError
from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEnded, TurnStarted
from fuseforks.projections.audit import (
    AuditFilter,
    AuditRows,
    DeliveryRow,
    OriginRow,
    audit_rows,
    digests,
    select,
)
from fuseforks.projections.read_model import read_rows
from fuseforks.projections.summary import EVERY_TURN, SummaryFilter, TurnSummary


class TurnInfo(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    events: int
    first_at: str
    last_at: str


class Position(msgspec.Struct, frozen=True, order=True):
    """A place in an ordered record's global order: after the event written by transaction `tx`
    at sequence `position`. `Position()` is before every event."""

    tx: int = 0
    position: int = 0


class _Closing:
    """A record or log is a context manager that closes it."""

    name: str
    """The store as every message shows it: a path, or a URL without its password."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TurnLog(_Closing, ABC):
    """A turn's events, appended one unit of work at a time."""

    @abstractmethod
    def append(self, envelopes: Sequence[Envelope]) -> None:
        """Store one unit of work atomically: all of it or none of it. Refuses, storing
        nothing, an envelope that holds pixels (`PixelLeakError`) and a batch that does not
        continue the turn's stored tail (`ConcurrencyError`)."""

    def append_now(self, envelopes: Sequence[Envelope]) -> bool:
        """`append` in the calling thread — the event loop's — when it cannot wait on anything
        (a lock another thread holds, another process's transaction, a network): True when the
        batch is stored. False when it would have to wait: nothing was stored, and the caller
        runs `append` in a worker thread instead. Raises as `append` does.

        A commit is a few dozen microseconds of local work, far less than handing it to a
        thread and waking the loop again; a store that can never promise that says False."""
        return False

    @abstractmethod
    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        """The turn's envelopes with seq > `after`, in order (older events upcast)."""

    @abstractmethod
    def last_seq(self, turn_id: str) -> int:
        """0 for an unknown turn."""


class Record(_Closing, ABC):
    """Recorded turns, for reading. The audit is the fold of `fuseforks.projections.audit` over
    every turn unless a store answers it from the read model's tables."""

    def notices(self) -> list[str]:
        """What a reader of this record must be told about it, one sentence each (a stream
        whose last line was cut short). Nothing, for a store."""
        return []

    @abstractmethod
    def read(self, turn_id: str, after: int = 0) -> list[Envelope]:
        """The turn's envelopes with seq > `after`, in order (older events upcast)."""

    @abstractmethod
    def turns(self) -> list[TurnInfo]:
        """Every turn, oldest first (by first time, then id)."""

    def everything(self) -> Iterator[Envelope]:
        """Every event, turn by turn (oldest turn first), each turn in seq order."""
        for info in self.turns():
            yield from self.read(info.turn_id)

    def conversation(self, conversation_id: str) -> list[Envelope]:
        """The `TurnStarted` and `TurnEnded` envelopes of every turn of a conversation, by turn
        id, each turn in seq order."""
        found = []
        for turn_id in sorted(info.turn_id for info in self.turns()):
            events = [e for e in self.read(turn_id) if isinstance(e.event, TurnStarted | TurnEnded)]
            if any(isinstance(e.event, TurnStarted) and e.event.conversation_id == conversation_id
                   for e in events):
                found += events
        return found

    def conversation_size(self, conversation_id: str) -> int:
        """How many turns a conversation has (started): what tells an agent that holds the
        conversation's tail whether a turn was added elsewhere since."""
        return sum(isinstance(e.event, TurnStarted) for e in self.conversation(conversation_id))

    def of_kinds(self, kinds: Sequence[str]) -> list[Envelope]:
        """Every event of these kinds, across turns, oldest first (by time, turn, seq)."""
        wanted = set(kinds)
        found = [e for e in self.everything() if e.kind in wanted]
        return sorted(found, key=lambda e: (e.at, e.turn_id, e.seq))

    def summaries(self, where: SummaryFilter = EVERY_TURN, *, newest_first: bool = False,
                  offset: int = 0, limit: int | None = None) -> list[TurnSummary]:
        """The summaries (the read model's) of the turns `where` keeps, oldest first (by start,
        then id) or newest first, from `offset`, at most `limit`."""
        found = sorted((s for s in read_rows(self.everything()).summaries if where.keeps(s)),
                       key=lambda s: (s.started, s.turn_id), reverse=newest_first)
        return found[offset:None if limit is None else offset + limit]

    def count_summaries(self, where: SummaryFilter = EVERY_TURN) -> int:
        """How many turns `where` keeps."""
        return len(self.summaries(where))

    def audit(self, where: AuditFilter) -> AuditRows:
        """The origins of `where.digest` (none without one) and the deliveries `where` selects,
        oldest first."""
        return select(audit_rows(self.everything()), where)

    def image_origins(self, digest: str) -> list[OriginRow]:
        """Where the image `digest` came from: each tool result that produced it."""
        return self.audit(AuditFilter(digest=digest)).origins

    def image_deliveries(self, *, digest: str | None = None, wire: str | None = None,
                         model: str | None = None, tool: str | None = None,
                         since: str | None = None) -> list[DeliveryRow]:
        """The deliveries these filters select, oldest first; `since`: a
        `fuseforks.projections.audit.since_key`."""
        return self.audit(AuditFilter(digest=digest, wire=wire, model=model, tool=tool,
                                      since=since)).deliveries

    def digests(self, prefix: str) -> list[str]:
        """Every image digest of the record that starts with `prefix` (lowercase hex), sorted."""
        return sorted(d for d in digests(audit_rows(self.everything())) if d.startswith(prefix))


class EventStore(TurnLog, Record, ABC):
    """A store: a turn log that is also a record."""


class OrderedRecord(Record, ABC):
    """A record that several processes write, followed in the order its events became final:
    every event once, each turn in seq order, and a follower's position never passes an event
    that is still to appear."""

    @abstractmethod
    def identity(self) -> str:
        """Which record this is, the same from every process: a follower that keeps a position
        keeps it per record, so that another record's positions never count."""

    @abstractmethod
    def follow_placed(self, after: Position | None = None,
                      limit: int = 1000) -> list[tuple[Position, Envelope]]:
        """Up to `limit` events after `after` (None: from the beginning), each with its own
        position: a reader that checkpoints per event resumes exactly after the last one it
        handled."""

    @abstractmethod
    def follow_encoded(self, after: Position | None = None,
                       limit: int = 1000) -> list[tuple[Position, str, int, bytes]]:
        """`follow_placed` for a reader that passes events on as JSON: (position, turn id, seq,
        the envelope's JSON, the bytes `encode_envelope` gives)."""

    def follow(self, after: Position | None = None,
               limit: int = 1000) -> tuple[list[Envelope], Position]:
        """Up to `limit` events after `after`, and the position to follow from next time
        (`after` itself when nothing new is final yet)."""
        placed = self.follow_placed(after, limit)
        return [e for _, e in placed], placed[-1][0] if placed else (after or Position())


class Fence(msgspec.Struct, frozen=True):
    """What a fenced write carries: the lease it is made under, its holder, and the epoch the
    lease was taken at (`fuseforks.stores.leases`)."""

    name: str
    holder: str
    epoch: int


class OrderedStore(EventStore, OrderedRecord, ABC):
    """A store that is also an ordered record: what workers share. Its appends can be fenced:
    with `fence_of` set, an append of a turn whose fence it gives is stored only while the
    turn's lease is at that epoch (`LeaseLost` otherwise, nothing of it stored)."""

    fence_of: Callable[[str], Fence | None] | None = None


def check_continuation(envelopes: Sequence[Envelope], last_seq: int) -> str:
    """Validate a batch against the stored tail; return its turn id."""
    if not envelopes:
        raise ValueError("append needs at least one envelope")
    turn_id = envelopes[0].turn_id
    expected = last_seq + 1
    for envelope in envelopes:
        if envelope.turn_id != turn_id:
            raise ValueError(
                f"one append holds one turn: {turn_id!r} and {envelope.turn_id!r} were mixed"
            )
        if envelope.seq != expected:
            raise ConcurrencyError(
                f"turn {turn_id}: expected seq {expected}, got {envelope.seq} "
                f"(stored tail is {last_seq}; another writer may have appended)"
            )
        expected += 1
    return turn_id
