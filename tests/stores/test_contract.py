"""One contract, every store: the in-memory reference, the SQLite file and the PostgreSQL database
(a real server: `tests.stores.server`) run the same tests."""

from __future__ import annotations

import base64
import io
import random
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from PIL import Image

from fuseforks.core.errors import ConcurrencyError
from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import BASE64_RUN_LIMIT, PixelLeakError
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import RoundStarted, ToolResultRecorded, TurnEnded
from fuseforks.stores.jsonl import TurnImport, export_turn, import_stream, read_stream
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import EventStore
from tests.events.samples import SAMPLES
from tests.stores.server import fresh_database


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request, tmp_path) -> Iterator[EventStore]:
    with ExitStack() as database:
        made: EventStore = (
            MemoryStore() if request.param == "memory"
            else SqliteStore(tmp_path / "s.db") if request.param == "sqlite"
            else PostgresStore(database.enter_context(fresh_database())))
        yield made
        made.close()


def sealed(turn_id: str, events, last_seq: int = 0, start: str = "2026-11-30T00:00:00.000Z"):
    return Sequencer(turn_id, FixedClock(start), last_seq).seal(events)


def test_append_then_read_returns_the_same_envelopes_in_order(store) -> None:
    first = sealed("t1", SAMPLES[:5])
    second = sealed("t1", SAMPLES[5:], last_seq=5)
    store.append(first)
    store.append(second)
    assert store.read("t1") == first + second
    last = len(SAMPLES)
    assert [e.seq for e in store.read("t1", after=last - 2)] == [last - 1, last]
    assert store.last_seq("t1") == len(SAMPLES)
    assert store.last_seq("unknown") == 0
    assert store.read("unknown") == []


def test_an_append_that_does_not_continue_the_sequence_is_refused(store) -> None:
    store.append(sealed("t1", SAMPLES[:3]))
    with pytest.raises(ConcurrencyError, match="turn t1: expected seq 4, got 3"):
        store.append(sealed("t1", SAMPLES[3:5], last_seq=2))
    with pytest.raises(ConcurrencyError, match="expected seq 4, got 5"):
        store.append(sealed("t1", SAMPLES[3:5], last_seq=4))
    assert [e.seq for e in store.read("t1")] == [1, 2, 3]


def test_a_round_that_fails_midway_leaves_nothing_of_itself(store) -> None:
    store.append(sealed("t1", [RoundStarted(round=1)]))
    good = sealed("t1", [RoundStarted(round=2), RoundStarted(round=3)], last_seq=1)
    gap = Envelope(turn_id="t1", seq=9, at="x", event=RoundStarted(round=4))
    with pytest.raises(ConcurrencyError):
        store.append([*good, gap])
    assert [e.seq for e in store.read("t1")] == [1]


def test_turns_are_listed_oldest_first_with_counts(store) -> None:
    store.append(sealed("late", SAMPLES[:2], start="2026-11-30T10:00:00.000Z"))
    store.append(sealed("early", SAMPLES[:3], start="2026-11-30T09:00:00.000Z"))
    listed = [(t.turn_id, t.events, t.first_at) for t in store.turns()]
    assert listed == [
        ("early", 3, "2026-11-30T09:00:00.000Z"),
        ("late", 2, "2026-11-30T10:00:00.000Z"),
    ]


def test_export_then_import_moves_a_turn_unchanged(store, tmp_path) -> None:
    original = sealed("t1", SAMPLES)
    store.append(original)
    path = tmp_path / "t1.jsonl"
    assert export_turn(store, "t1", path) == len(SAMPLES)
    assert path.read_bytes().count(b"\n") == len(SAMPLES)
    target = MemoryStore()
    assert import_stream(target, path) == [
        TurnImport(turn_id="t1", outcome="imported", added=(1, len(SAMPLES)))]
    assert target.read("t1") == original
    assert read_stream(path) == original


def test_a_sqlite_append_with_a_leaking_event_rolls_back_the_whole_round(tmp_path) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        leaking = ToolResultRecorded(round=1, call_id="c", name="t", ok=True,
                                     body=f"frame: {png_base64()}")
        batch = [*sealed("t1", [RoundStarted(round=1)]), Envelope(turn_id="t1", seq=2, at="x", event=leaking)]
        with pytest.raises(PixelLeakError):
            store.append(batch)
        assert store.read("t1") == []


def png_base64() -> str:
    """A small noisy PNG as base64: image data, and longer than the privacy guard's run limit."""
    image = Image.frombytes("RGB", (16, 16), random.Random(7).randbytes(16 * 16 * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def test_every_store_refuses_an_envelope_carrying_base64_image_data_and_keeps_nothing_of_its_batch(
    store,
) -> None:
    data = png_base64()
    assert len(data) > BASE64_RUN_LIMIT
    kept = sealed("t1", [RoundStarted(round=1)])
    store.append(kept)
    leaking = TurnEnded(rounds=1, stop="answered", answer=f"Here is the frame: {data}")
    # Handed straight to the store: sealing would have refused it first.
    batch = [*sealed("t1", [RoundStarted(round=2)], last_seq=1),
             Envelope(turn_id="t1", seq=3, at="2026-11-30T00:00:01.000Z", event=leaking)]
    with pytest.raises(PixelLeakError, match=r"refusing to store TurnEnded #3: it holds a base64 run"):
        store.append(batch)
    alone = Envelope(turn_id="t2", seq=1, at="2026-11-30T00:00:02.000Z", event=leaking)
    with pytest.raises(PixelLeakError, match=r"refusing to store TurnEnded #1"):
        store.append([alone])
    assert store.read("t1") == kept
    assert store.last_seq("t1") == 1
    assert store.read("t2") == []
    assert [(t.turn_id, t.events) for t in store.turns()] == [("t1", 1)]
