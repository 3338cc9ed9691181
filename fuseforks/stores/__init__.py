"""Where events are kept: the store interface, SQLite and in-memory stores, JSON Lines streams,
and the audit's SQL views."""

from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import EventStore, TurnInfo

__all__ = ["EventStore", "MemoryStore", "SqliteStore", "TurnInfo"]
