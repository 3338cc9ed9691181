"""Whole-file shortcuts over `fuseforks.stores.jsonl` for setting up and checking stores in tests.

`fuseforks export` and `fuseforks import` read and write streams their own way (every turn at
once, a cut last line told and left out, each turn's outcome printed as it is settled), so these
two one-liners have no caller in the product and live here.
"""

from __future__ import annotations

from pathlib import Path

from fuseforks.core.errors import FuseforksError
from fuseforks.stores.jsonl import TurnImport, import_turns, read_stream, write_stream
from fuseforks.stores.store import Record, TurnLog


def export_turn(store: Record, turn_id: str, path: str | Path) -> int:
    """Write one turn of `store` to a JSON Lines stream at `path`; the number of events."""
    envelopes = store.read(turn_id)
    if not envelopes:
        raise FuseforksError(f"no turn {turn_id!r} in the store")
    with open(path, "wb") as out:
        return write_stream(envelopes, out)


def import_stream(store: TurnLog, path: str | Path) -> list[TurnImport]:
    """Import every turn of the stream at `path` (read whole before anything is written)."""
    return list(import_turns(store, read_stream(path)))
