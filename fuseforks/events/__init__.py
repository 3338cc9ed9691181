"""Events are the truth: the typed vocabulary, its codec, the stores and the bus."""

from fuseforks.events.codec import SCHEMA_VERSION, Envelope, decode_envelope, encode_envelope
from fuseforks.events.memory_store import MemoryStore
from fuseforks.events.sqlite_store import SqliteStore
from fuseforks.events.store import EventStore, TurnInfo
from fuseforks.events.types import *  # noqa: F403 - the vocabulary is the public API
from fuseforks.events.types import EVENT_TYPES, TurnEvent

__all__ = [
    "EVENT_TYPES",
    "SCHEMA_VERSION",
    "Envelope",
    "EventStore",
    "MemoryStore",
    "SqliteStore",
    "TurnEvent",
    "TurnInfo",
    "decode_envelope",
    "encode_envelope",
]
