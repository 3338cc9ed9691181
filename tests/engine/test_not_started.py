"""A turn that could not start, and a taken-over turn whose record cannot be continued: both are
recorded by the engine, with the facts as they were given — a wire no one serves under its own
name — and both verify."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from PIL import Image

from fuseforks.engine.not_started import record_not_started
from fuseforks.engine.replay import verify
from fuseforks.engine.takeover import record_abandoned
from fuseforks.engine.turn import TurnSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock
from fuseforks.events.types import TurnEnded, TurnNotStarted
from fuseforks.projections.log import turn_log
from fuseforks.projections.summary import turn_summary
from fuseforks.stores.memory import MemoryStore
from tests.traces.support import recorded


def store_writer(store: MemoryStore):
    async def publish(batch: Sequence[Envelope]) -> None:
        store.append(batch)
    return publish


def pasted_png() -> str:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (255, 0, 0)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_an_unknown_wire_is_recorded_as_given_with_the_reason() -> None:
    store = MemoryStore()
    spec = TurnSpec(agent="u", request="hello", language="ja", system="s",
                    conversation_id="conv-1")
    await record_not_started("turn-x", spec, wire="carrier-pigeon", model="m",
                             reason="unknown wire 'carrier-pigeon'", publish=store_writer(store),
                             clock=FixedClock())
    events = store.read("turn-x")
    assert [(e.seq, e.at, e.event) for e in events] == [
        (1, "2026-01-01T00:00:00.000Z", TurnNotStarted(
            agent="u", wire="carrier-pigeon", model="m", language="ja", request="hello",
            system="s", conversation_id="conv-1")),
        (2, "2026-01-01T00:00:00.000Z", TurnEnded(rounds=0, stop="error",
                                                  error="unknown wire 'carrier-pigeon'")),
    ]
    assert turn_log(events) == [
        "turn: agent=u backend=carrier-pigeon model=m rounds=0 stop=error"]
    assert (await verify(events)).identical
    row = turn_summary(events)
    assert (row.agent, row.wire, row.model, row.rounds, row.stop) == (
        "u", "carrier-pigeon", "m", 0, "error")


async def test_media_in_any_text_of_a_request_that_cannot_start_is_cut_out() -> None:
    store = MemoryStore()
    pasted = pasted_png()
    spec = TurnSpec(agent=f"a {pasted}", request=f"hello {pasted}")
    await record_not_started("turn-y", spec, wire=f"w {pasted}", model=f"m {pasted}",
                             reason=f"no {pasted}", publish=store_writer(store))
    started, ended = (e.event for e in store.read("turn-y"))
    assert isinstance(started, TurnNotStarted) and isinstance(ended, TurnEnded)
    texts = [started.agent, started.wire, started.model, started.request, ended.error]
    assert all(pasted[:40] not in t and "[base64 omitted:" in t for t in texts), texts


async def test_a_record_that_cannot_be_continued_ends_in_an_error_after_its_last_event() -> None:
    cut = recorded("p4-anthropic")[:9]  # a round-2 request without its answer
    store = MemoryStore()
    store.append(cut)
    await record_abandoned(cut, "turn p4-anthropic cannot be taken over: ...",
                           store_writer(store), clock=FixedClock())
    ended = store.read("p4-anthropic")[-1]
    assert (ended.seq, ended.event) == (10, TurnEnded(
        rounds=2, stop="error", error="turn p4-anthropic cannot be taken over: ..."))
