"""Small recorded turns built by hand, for the command-line tests: a camera turn whose images have
the digests, times and wire a test needs."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import msgspec

from fuseforks.core.names import WireName
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import (
    ImageDelivery,
    ImageMeta,
    ImagesNormalized,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ToolCalled,
    ToolCallRecord,
    ToolResultRecorded,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    Usage,
)
from fuseforks.stores.jsonl import write_stream
from fuseforks.stores.sqlite import SqliteStore

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
DELIVERY_SEQ = 9
"""The seq of the request that carries the images in `camera_turn`."""


def camera_turn(turn_id: str, digests: Sequence[str], *, start: str = "2026-11-30T08:00:00.000Z",
                delivered_at: str | None = None, wire: WireName = "anthropic",
                model: str = "claude-sonnet-5-5", tool: str = "cam__shot",
                ended: bool = True) -> list[Envelope]:
    """One tool round whose result holds `digests`, then the answer: 11 events (10 when not
    `ended`), the images carried by the request at seq 9, which is at `delivered_at` if given."""
    events: list[TurnEvent] = [
        TurnStarted(agent="cam_agent", wire=wire, model=model, endpoint_host="127.0.0.1",
                    language="en", request="Take a picture.", max_rounds=8, image_cap=20,
                    placement="native", summary_instruction="Sum up."),
        RoundStarted(round=1),
        RequestSent(round=1, wire=wire, model=model, endpoint_host="127.0.0.1", message_count=1),
        ResponseReceived(round=1, tool_calls=[ToolCallRecord(call_id="c1", name=tool)],
                         usage=Usage(input_tokens=100, output_tokens=7), stop_reason="tool_use"),
        ToolCalled(round=1, call_id="c1", server="cam", name=tool),
        ImagesNormalized(round=1, call_id="c1", images=[
            ImageMeta(digest=d, source_format="JPEG", media_type="image/jpeg",
                      path="pass_through", width=64, height=48, size=1000 + i, source_size=1000 + i)
            for i, d in enumerate(digests)]),
        ToolResultRecorded(round=1, call_id="c1", name=tool, ok=True, body="a frame",
                           image_digests=list(digests)),
        RoundStarted(round=2),
        RequestSent(round=2, wire=wire, model=model, endpoint_host="127.0.0.1", message_count=3,
                    images=[ImageDelivery(digest=d, call_id="c1", placement="native")
                            for d in digests]),
        ResponseReceived(round=2, text="I see it.", usage=Usage(input_tokens=200, output_tokens=9,
                                                                cache_read_tokens=50),
                         stop_reason="end_turn"),
    ]
    if ended:
        events.append(TurnEnded(rounds=2, stop="answered", answer="I see it."))
    envelopes = Sequencer(turn_id, FixedClock(start), 0).seal(events)
    if delivered_at is not None:
        envelopes[DELIVERY_SEQ - 1] = msgspec.structs.replace(envelopes[DELIVERY_SEQ - 1],
                                                              at=delivered_at)
    return envelopes


def write_jsonl(path: Path, envelopes: Sequence[Envelope]) -> Path:
    with open(path, "wb") as out:
        write_stream(envelopes, out)
    return path


def make_store(path: Path, *turns: Sequence[Envelope]) -> Path:
    with SqliteStore(path) as store:
        for envelopes in turns:
            store.append(envelopes)
    return path


def foreign_database(path: Path) -> Path:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY)")
    connection.close()
    return path


def newer_store(path: Path) -> Path:
    SqliteStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE fuseforks_meta SET value = '99' WHERE key = 'store_version'")
    connection.close()
    return path


def digest(n: int, prefix: str = "") -> str:
    return (prefix + f"{n:x}" * 64)[:64]
