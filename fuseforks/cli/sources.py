"""Reading turns from what a user points at: a SQLite store or a JSON Lines stream."""

from __future__ import annotations

from pathlib import Path

import click

from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.stores.jsonl import read_stream
from fuseforks.stores.sqlite import SqliteStore

SQLITE_MAGIC = b"SQLite format 3\x00"


def load_turns(source: Path, turn_id: str | None = None) -> dict[str, list[Envelope]]:
    """Turns of `source` by id, in stored order; a clear CLI error on anything unreadable."""
    try:
        with open(source, "rb") as handle:
            is_sqlite = handle.read(16) == SQLITE_MAGIC
        if is_sqlite:
            with SqliteStore(source) as store:
                ids = [turn_id] if turn_id else [t.turn_id for t in store.turns()]
                turns = {i: store.read(i) for i in ids}
        else:
            turns = {}
            for envelope in read_stream(source):
                turns.setdefault(envelope.turn_id, []).append(envelope)
            if turn_id:
                turns = {turn_id: turns.get(turn_id, [])}
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    if turn_id and not turns.get(turn_id):
        raise click.ClickException(f"{source}: no turn {turn_id!r}")
    return turns
