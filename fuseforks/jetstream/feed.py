"""Following the events stream from any process, each event once.

A follower sees every event the relays publish, in each turn's seq order. It drops what it has
seen by `(turn_id, seq)`: the stream is fed by several relays and a durable consumer redelivers
what was not acknowledged, so a copy can arrive; a projection fed by this feed is idempotent.
A follower that meets a turn after its start (it started following mid-turn, or resumed a durable
consumer) first reads that turn's earlier events from the stream, marked `earlier`, so a
projection that needs the turn's context (the log needs `TurnStarted`) has it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import anyio
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEnded
from fuseforks.jetstream.streams import EVENTS_STREAM, EVENTS_SUBJECT, decode, turn_subject

ENDED_KEPT = 100_000
DURABLE_ACK_WAIT = 5.0
"""Seconds after which an event a dead durable follower held is delivered again."""
BACKFILL_WAIT = 2.0
"""Seconds to wait for a turn's earlier events to arrive from the stream."""


@dataclass(frozen=True, slots=True)
class Delivery:
    envelope: Envelope
    earlier: bool = False
    """Read for context: an event from before this follower met the turn."""


class Seen:
    """The last seq seen of each open turn, and the most recent `ENDED_KEPT` turns that ended
    (a copy of an event of a turn ended longer ago than that is not expected)."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.ended: OrderedDict[str, None] = OrderedDict()

    def fresh(self, envelope: Envelope) -> bool:
        if envelope.turn_id in self.ended or envelope.seq <= self.last.get(envelope.turn_id, 0):
            return False
        self.last[envelope.turn_id] = envelope.seq
        if isinstance(envelope.event, TurnEnded):
            self.ended[envelope.turn_id] = None
            if len(self.ended) > ENDED_KEPT:
                self.ended.popitem(last=False)
            self.last.pop(envelope.turn_id, None)
        return True


async def turn_events(js: JetStreamContext, turn_id: str, upto: int) -> list[Envelope]:
    """The events of `turn_id` with seq up to `upto` that the stream holds, in seq order."""
    found: dict[int, Envelope] = {}
    subscription = await js.subscribe(turn_subject(turn_id), stream=EVENTS_STREAM,
                                      ordered_consumer=True, deliver_policy=DeliverPolicy.ALL)
    try:
        with anyio.move_on_after(BACKFILL_WAIT):
            while len(found) < upto:
                message = await subscription.next_msg(timeout=BACKFILL_WAIT)
                envelope = decode(message.data)
                if envelope.turn_id == turn_id and envelope.seq <= upto:
                    found[envelope.seq] = envelope
    except TimeoutError:
        pass
    finally:
        await subscription.unsubscribe()
    return [found[seq] for seq in sorted(found)]


async def follow(js: JetStreamContext, *, durable: str | None = None,
                 from_start: bool = False,
                 ready: Callable[[], None] | None = None) -> AsyncIterator[Delivery]:
    """Every event published from now on (`from_start`: every event the stream holds), each
    once. `durable`: a named consumer that the server remembers — a follower that restarts
    with the same name goes on where it stopped. An event is acknowledged when the next one is
    asked for, that is once the caller has handled it: a follower killed while handling one gets
    it again (at least once across a kill; exactly once otherwise)."""
    seen = Seen()
    policy = DeliverPolicy.ALL if from_start or durable else DeliverPolicy.NEW
    if durable:
        # One event in hand at a time: one that was handed out but not acknowledged when the
        # follower died comes again before any later one, so nothing is skipped.
        config = ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=DURABLE_ACK_WAIT,
                                deliver_policy=policy, max_ack_pending=1)
        subscription = await js.subscribe(f"{EVENTS_SUBJECT}.*", durable=durable,
                                          stream=EVENTS_STREAM, config=config, manual_ack=True)
    else:
        subscription = await js.subscribe(f"{EVENTS_SUBJECT}.*", stream=EVENTS_STREAM,
                                          ordered_consumer=True, deliver_policy=policy)
    if ready is not None:
        ready()  # subscribed: every event from here on will be delivered
    try:
        async for message in _messages(subscription):
            envelope = decode(message.data)
            if (envelope.seq > 1 and envelope.turn_id not in seen.last
                    and envelope.turn_id not in seen.ended):
                for earlier in await turn_events(js, envelope.turn_id, envelope.seq - 1):
                    if seen.fresh(earlier):
                        yield Delivery(earlier, earlier=True)
            if seen.fresh(envelope):
                yield Delivery(envelope)
            if durable:
                await message.ack()
    finally:
        await subscription.unsubscribe()


async def _messages(subscription: JetStreamContext.PushSubscription) -> AsyncIterator[Msg]:
    while True:
        try:
            yield await subscription.next_msg(timeout=3600)
        except TimeoutError:
            continue
