"""A current SQLite store made into one of an older table layout, as an older fuseforks left it:
what each layout had that today's has not (the image index, the audit views, an index of every
kind), and nothing of today's read model."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fuseforks.stores.read_tables import DROP
from fuseforks.stores.sqlite import INDEXED_KINDS


def as_layout(path: Path, version: int) -> None:
    """Layouts 1 (events only) to 4 (views over an image index, one index per kind read across
    turns); 3 had one index of every event's kind instead."""
    with sqlite3.connect(path) as connection:
        for statement in DROP:
            connection.execute(statement)
        connection.execute("DELETE FROM fuseforks_meta WHERE key = 'read_model_version'")
        if version >= 2:
            connection.execute(
                "CREATE TABLE image_index (digest TEXT NOT NULL, turn_id TEXT NOT NULL, "
                "seq INTEGER NOT NULL, role TEXT NOT NULL, PRIMARY KEY (digest, role, turn_id)) "
                "WITHOUT ROWID, STRICT")
            for view in ("tool_calls", "image_origins", "image_deliveries"):
                connection.execute(f"CREATE VIEW {view} AS SELECT * FROM image_index")
        if version <= 3:
            for kind in INDEXED_KINDS:
                connection.execute(f"DROP INDEX events_{kind}")
            connection.execute("CREATE INDEX events_kind ON events(kind)")
        connection.execute("UPDATE fuseforks_meta SET value = ? WHERE key = 'store_version'",
                           [str(version)])
    connection.close()
