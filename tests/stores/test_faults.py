"""Bad input to the store: a clear error naming the file, and nothing overwritten."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fuseforks.core.errors import CorruptStoreError, NewerSchemaError, StreamFormatError
from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import PixelLeakError
from fuseforks.events.types import RoundStarted, ToolResultRecorded
from fuseforks.stores.jsonl import read_stream
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes
from tests.stores.test_contract import png_base64, sealed

V0_STREAM = Path(__file__).parents[1] / "events" / "fixtures" / "v0_turn.jsonl"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    before = digest(path)
    with pytest.raises(CorruptStoreError, match=f"{path}: not a readable SQLite database"):
        SqliteStore(path)
    assert digest(path) == before


def test_someone_elses_sqlite_database_is_refused_and_left_untouched(tmp_path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY)")
    before = digest(path)
    with pytest.raises(CorruptStoreError, match=r"not a fuseforks store \(it has tables \['invoices'\]"):
        SqliteStore(path)
    assert digest(path) == before


def test_a_store_from_a_newer_fuseforks_is_refused(tmp_path) -> None:
    path = tmp_path / "new.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE fuseforks_meta SET value = '99' WHERE key = 'store_version'")
    before = digest(path)
    with pytest.raises(NewerSchemaError, match=f"{path}: store version 99 .* nothing was changed"):
        SqliteStore(path)
    assert digest(path) == before


def test_a_sqlite_append_with_a_leaking_event_rolls_back_the_whole_round(tmp_path) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        leaking = ToolResultRecorded(round=1, call_id="c", name="t", ok=True,
                                     body=f"frame: {png_base64()}")
        batch = [*sealed("t1", [RoundStarted(round=1)]),
                 Envelope(turn_id="t1", seq=2, at="x", event=leaking)]
        with pytest.raises(PixelLeakError):
            store.append(batch)
        assert store.read("t1") == []


def test_a_stream_with_a_truncated_last_line_names_file_and_line(tmp_path) -> None:
    good = V0_STREAM.read_bytes()
    path = tmp_path / "cut.jsonl"
    path.write_bytes(good[: good.rindex(b"\n", 0, -1) + 40])
    with pytest.raises(StreamFormatError, match=f"{path}:6: truncated last line"):
        read_stream(path)


def test_a_stream_with_a_bad_line_in_the_middle_names_it(tmp_path) -> None:
    lines = V0_STREAM.read_bytes().split(b"\n")
    lines[2] = b'{"turn_id": "v0-turn", "seq": 3'
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(StreamFormatError, match=f"{path}:3: unreadable line"):
        read_stream(path)


WRITER = """
import sys
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.events.types import RoundStarted
store = SqliteStore(sys.argv[1])
n = 0
while True:
    n += 1
    turn = f"t{n % 5}"
    seq = Sequencer(turn, FixedClock(), store.last_seq(turn))
    store.append(seq.seal([RoundStarted(round=i) for i in range(10)]))
    if n == 20:
        print("ready", flush=True)
"""


def test_sigkill_while_appending_leaves_every_committed_round_whole(tmp_path) -> None:
    path = tmp_path / "killed.db"
    writer = processes.spawn(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)
    writer.stdout.close()
    with SqliteStore(path) as store:
        turns = store.turns()
        assert sum(t.events for t in turns) >= 200
        for turn in turns:
            seqs = [e.seq for e in store.read(turn.turn_id)]
            assert seqs == list(range(1, len(seqs) + 1))
            assert len(seqs) % 10 == 0, f"{turn.turn_id} has a partial round: {len(seqs)} events"
