"""Events are the truth: the typed vocabulary of a turn, its envelope and codec, and the sealing
of new events (sequence numbers, times, the privacy check)."""

from fuseforks.events.codec import SCHEMA_VERSION, Envelope, decode_envelope, encode_envelope
from fuseforks.events.types import *  # noqa: F403 - the vocabulary is the public API
from fuseforks.events.types import EVENT_TYPES, TurnEvent

__all__ = [
    "EVENT_TYPES",
    "SCHEMA_VERSION",
    "Envelope",
    "TurnEvent",
    "decode_envelope",
    "encode_envelope",
]
