from __future__ import annotations

import anyio
import pytest

from fuseforks.bus.bus import Bus
from fuseforks.bus.subscribers import LogWriter, StoreWriter
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import RoundStarted, ToolResultRecorded, TurnEnded, TurnStarted
from fuseforks.stores.sqlite import SqliteStore


class Collector:
    def __init__(self, name: str) -> None:
        self.name = name
        self.seqs: list[int] = []

    async def handle(self, batch) -> None:
        self.seqs.extend(e.seq for e in batch)


class Gate(Collector):
    def __init__(self) -> None:
        super().__init__("gate")
        self.open = anyio.Event()

    async def handle(self, batch) -> None:
        await self.open.wait()
        await super().handle(batch)


class Crasher(Collector):
    async def handle(self, batch) -> None:
        if batch[0].seq > 2:
            raise RuntimeError("disk on fire")
        await super().handle(batch)


def rounds(n: int, turn: str = "t1"):
    sequencer = Sequencer(turn, FixedClock())
    return [sequencer.seal([RoundStarted(round=i)]) for i in range(1, n + 1)]


async def test_every_subscriber_sees_every_batch_in_order() -> None:
    a, b = Collector("a"), Collector("b")
    async with Bus([a, b]) as bus:
        for batch in rounds(20):
            await bus.publish(batch)
    assert a.seqs == b.seqs == list(range(1, 21))
    assert bus.failures == []


async def test_a_slow_subscriber_holds_the_publisher_back() -> None:
    gate = Gate()
    batches = rounds(3)
    async with Bus([gate]) as bus:
        await bus.publish(batches[0])  # taken by the subscriber, which now waits at the gate
        with anyio.move_on_after(0.2) as waited:
            await bus.publish(batches[1])
        assert waited.cancelled_caught, "publish did not wait for the busy subscriber"
        gate.open.set()
        with anyio.fail_after(2):
            await bus.publish(batches[1])
            await bus.publish(batches[2])
    assert gate.seqs == [1, 2, 3]


async def test_a_crashing_subscriber_loses_nothing_already_stored(tmp_path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    crasher = Crasher("flaky")
    async with Bus([StoreWriter(store), crasher]) as bus:
        for batch in rounds(6):
            await bus.publish(batch)
    assert [e.seq for e in store.read("t1")] == [1, 2, 3, 4, 5, 6]
    assert crasher.seqs == [1, 2]
    assert [(f.subscriber, f.error, f.last_seq_handled) for f in bus.failures] == [
        ("flaky", "RuntimeError: disk on fire", 2)
    ]
    store.close()


async def test_closing_the_publisher_ends_every_subscriber_and_flushes_the_log(tmp_path) -> None:
    lines: list[str] = []
    store = SqliteStore(tmp_path / "s.db")
    sequencer = Sequencer("t1", FixedClock())
    with anyio.fail_after(5):
        async with Bus([StoreWriter(store), LogWriter(lines.append)], buffer=8) as bus:
            await bus.publish(sequencer.seal([
                TurnStarted(max_rounds=8, image_cap=20, placement="native", summary_instruction="S", agent="a1", wire="gemini", model="g", endpoint_host="h",
                            language="en", request="r"),
                ToolResultRecorded(round=1, call_id="c", name="cam", ok=True, body="{}"),
            ]))
            await bus.publish(sequencer.seal([TurnEnded(rounds=1, stop="answered")]))
    assert lines == [
        "tool: agent=a1 round=1 name=cam ok=true body_chars=2",
        "turn: agent=a1 backend=gemini model=g rounds=1 stop=answered",
    ]
    assert store.last_seq("t1") == 3
    store.close()


def test_buffer_must_be_a_whole_number() -> None:
    with pytest.raises(ValueError, match="whole number"):
        Bus([], buffer=0.5)


async def test_the_log_writer_forgets_a_turn_once_it_has_ended() -> None:
    """A long-running process writes many turns; the writer must not keep every one of them."""
    lines: list[str] = []
    writer = LogWriter(lines.append)
    for turn in ("t1", "t2"):
        sequencer = Sequencer(turn, FixedClock())
        await writer.handle(sequencer.seal([
            TurnStarted(max_rounds=8, image_cap=20, placement="native", summary_instruction="S", agent="a", wire="gemini", model="g", endpoint_host="h", language="en",
                        request="r"),
        ]))
        assert writer.open_turns == 1
        await writer.handle(sequencer.seal([TurnEnded(rounds=1, stop="answered")]))
        assert writer.open_turns == 0
    assert lines == ["turn: agent=a backend=gemini model=g rounds=1 stop=answered"] * 2
