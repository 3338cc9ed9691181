"""Taking over a turn whose process died, at every point its record can end.

The record a dying process leaves always ends at a write-ahead commit: after a `RequestSent` (a
request in flight) or after a round's `ToolCalled` events (tool calls in flight). A reference turn
runs to its end; its record is then cut at each commit point and taken over by a fresh agent with
a fresh simulator and a fresh MCP server process. The takeover must repeat no recorded step, say
what was lost, finish the turn, and verify with replay.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

import msgspec
import pytest

from fuseforks.agent import Agent, AgentSettings
from fuseforks.core.errors import NothingToTakeOver, PrefixDiverged
from fuseforks.engine.replay import verify
from fuseforks.events.codec import Envelope, encode_envelope
from fuseforks.events.types import (
    RequestSent,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.simulator import Script, Simulator, run_simulator
from fuseforks.stores.memory import MemoryStore
from tests.engine.rig import FAST, RIG, bodies

WIRE, MODEL = "anthropic", "claude-sonnet-5-5"
SETTINGS = AgentSettings(retry=FAST, image_cap=2)
LOST_NOTE = "(these images are no longer available: the turn was resumed after an interruption)"
LOST_RESULT = ("(the result of this call was lost: the turn was resumed after an interruption, "
               "and the tool may or may not have run)")


def cut_points(events: list[Envelope]) -> list[int]:
    """Seqs after which the engine commits before a side effect."""
    points = []
    for index, envelope in enumerate(events):
        following = events[index + 1].event if index + 1 < len(events) else None
        if isinstance(envelope.event, RequestSent) or (
                isinstance(envelope.event, ToolCalled) and not isinstance(following, ToolCalled)):
            points.append(envelope.seq)
    return points


@asynccontextmanager
async def rig_agent(store: MemoryStore, settings: AgentSettings = SETTINGS,
                    ) -> AsyncIterator[tuple[Simulator, Agent]]:
    """The simulator calling the rig's camera for three rounds, and an agent on `store`."""
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    async with run_simulator(script=Script(call_tools=("rig__frame",), rounds=3)) as sim, \
            ToolHub([server]) as hub, \
            Agent(wire=WIRE, model=MODEL, base_url=sim.base_urls[WIRE], api_key="sk-test",
                  tools=hub, db=store, log=None, settings=settings) as agent:
        yield sim, agent


async def run_reference() -> list[Envelope]:
    store = MemoryStore()
    async with rig_agent(store, replace(SETTINGS, worker="w1")) as (_, agent):
        result = await agent.run("Look at the camera.", turn_id="turn-takeover")
    assert result.stop == "answered"
    started = result.events[0].event
    assert isinstance(started, TurnStarted) and started.worker == "w1"
    return list(result.events)


@pytest.fixture(scope="module")
def reference() -> list[Envelope]:
    import anyio
    return anyio.run(run_reference)


def test_the_reference_turn_has_every_kind_of_cut(reference: list[Envelope]) -> None:
    points = cut_points(reference)
    kinds = [type(reference[p - 1].event).__name__ for p in points]
    assert kinds == ["RequestSent", "ToolCalled"] * 3 + ["RequestSent"]


@pytest.mark.parametrize("index", range(7))
async def test_takeover_at_each_commit_point(reference: list[Envelope], index: int) -> None:
    cut = cut_points(reference)[index]
    prefix = reference[:cut]
    store = MemoryStore()
    store.append(prefix)
    async with rig_agent(store) as (sim, agent):
        result = await agent.take_over("turn-takeover", worker="w2")
        received = bodies(sim)
    stored = store.read("turn-takeover")
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert stored[:cut] == prefix  # the record is kept as it was
    assert stored == list(result.events)
    taken = stored[cut].event
    assert isinstance(taken, TurnTakenOver)
    assert (taken.worker, taken.taken_from) == ("w2", "w1")
    assert taken.endpoint_host == "127.0.0.1"
    last = prefix[-1].event
    # Every image on the message list was held by the dead process only.
    carried = [i.digest for i in last.images] if isinstance(last, RequestSent) else None
    if isinstance(last, ToolCalled):
        calls = [e.event.call_id for e in prefix if isinstance(e.event, ToolCalled)
                 and e.event.round == last.round]
        assert taken.calls_lost == calls
        results = [e.event for e in stored[cut + 1 : cut + 1 + len(calls)]]
        assert all(isinstance(r, ToolResultRecorded) and not r.ok and r.body == LOST_RESULT
                   and r.fault == "lost in takeover" for r in results)
    else:
        assert taken.calls_lost == []
        assert taken.images_lost == carried
        resent = stored[cut + 1].event
        assert isinstance(resent, RequestSent) and resent.images == []
        assert (resent.round, resent.purpose) == (last.round, last.purpose)
    # No provider request with a recorded answer is sent again: the simulator saw exactly the
    # requests recorded after the takeover.
    after = [e.event for e in stored[cut:] if isinstance(e.event, RequestSent)]
    assert len(received) == len(after)
    if taken.images_lost:
        assert LOST_NOTE in str(received[0])
    assert isinstance(stored[-1].event, TurnEnded) and stored[-1].event.stop == "answered"
    assert result.answer == stored[-1].event.answer != ""
    verification = await verify(stored)
    assert verification.identical, verification.divergence


async def test_an_ended_turn_is_not_taken_over(reference: list[Envelope]) -> None:
    store = MemoryStore()
    store.append(reference)
    async with Agent(wire=WIRE, model=MODEL, base_url="http://127.0.0.1:9", api_key="k",
                     tools=ToolHub([]), db=store, log=None) as agent:
        with pytest.raises(NothingToTakeOver, match="already ended"):
            await agent.take_over("turn-takeover")
        with pytest.raises(NothingToTakeOver, match="no record"):
            await agent.take_over("turn-unknown")
    assert store.read("turn-takeover") == reference


async def test_a_turn_taken_over_twice_at_the_same_request(reference: list[Envelope]) -> None:
    """The second worker dies too, after sending the request again: the third takes over at
    that request, records a second `TurnTakenOver`, and the turn verifies."""
    cut = cut_points(reference)[2]  # the request of round 2, which carries an image
    store = MemoryStore()
    store.append(reference[:cut])
    async with rig_agent(store) as (sim, agent):
        await agent.take_over("turn-takeover", worker="w2")
        second = store.read("turn-takeover")
        assert isinstance(second[cut].event, TurnTakenOver)
        assert isinstance(second[cut + 1].event, RequestSent)
        again = MemoryStore()
        again.append(second[: cut + 2])  # w2 died with its resent request in flight
    async with rig_agent(again) as (sim, agent):
        await agent.take_over("turn-takeover", worker="w3")
        received = bodies(sim)
    stored = again.read("turn-takeover")
    taken = [e.event for e in stored if isinstance(e.event, TurnTakenOver)]
    assert [(t.worker, t.taken_from, t.images_lost) for t in taken] == [
        ("w2", "w1", taken[0].images_lost), ("w3", "w2", [])]
    assert taken[0].images_lost  # w1's image was lost once, and said once
    assert isinstance(stored[cut + 2].event, TurnTakenOver)
    resent = stored[cut + 3].event
    assert isinstance(resent, RequestSent) and resent.images == []
    assert len(received) == sum(isinstance(e.event, RequestSent) for e in stored[cut + 2:])
    assert (await verify(stored)).identical


async def test_a_record_that_names_no_worker_is_taken_over_from_no_one(
        reference: list[Envelope]) -> None:
    """A turn recorded before workers named themselves on its start (or run by a program of its
    own): the takeover cannot say whom it took the turn from, and says so with an empty name."""
    unnamed = [msgspec.structs.replace(reference[0], event=msgspec.structs.replace(
        reference[0].event, worker="")), *reference[1:cut_points(reference)[0]]]
    store = MemoryStore()
    store.append(unnamed)
    async with rig_agent(store) as (_, agent):
        await agent.take_over("turn-takeover", worker="w2")
    stored = store.read("turn-takeover")
    (taken,) = [e.event for e in stored if isinstance(e.event, TurnTakenOver)]
    assert (taken.worker, taken.taken_from) == ("w2", "")
    assert b"taken_from" not in encode_envelope(stored[len(unnamed)])  # not written when empty
    assert (await verify(stored)).identical


async def test_a_record_cut_where_no_commit_happens_is_not_taken_over_live(
        reference: list[Envelope]) -> None:
    """A record that ends between two commits (edited, or written by another engine) would make
    the takeover go live without saying so: it is refused, and the record kept as it is."""
    odd = next(i for i, e in enumerate(reference) if isinstance(e.event, ToolResultRecorded)) + 1
    store = MemoryStore()
    store.append(reference[:odd])
    async with run_simulator(script=Script(call_tools=("rig__frame",), rounds=3)) as sim, \
            Agent(wire=WIRE, model=MODEL, base_url=sim.base_urls[WIRE], api_key="sk-test",
                  tools=ToolHub([]), db=store, log=None, settings=SETTINGS) as agent:
        with pytest.raises(PrefixDiverged, match=f"its record ends at seq {odd}"):
            await agent.take_over("turn-takeover", worker="w2")
        assert sim.received == []
    assert store.read("turn-takeover") == reference[:odd]
