"""Where events are kept: the store contract in tiers (a turn log, a record, an ordered record),
the in-memory, SQLite and PostgreSQL stores on one SQL base, JSON Lines streams (read as records
too), and the audit's SQL views."""

from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import (
    EventStore,
    OrderedRecord,
    OrderedStore,
    Record,
    TurnInfo,
    TurnLog,
)
from fuseforks.stores.stream import StreamRecord

__all__ = [
    "EventStore",
    "MemoryStore",
    "OrderedRecord",
    "OrderedStore",
    "Record",
    "SqliteStore",
    "StreamRecord",
    "TurnInfo",
    "TurnLog",
]
