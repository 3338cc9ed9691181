"""The relay: the store's events, published on the events stream in the store's global order.

Why a relay and not a publish after each commit: a process can die between its commit and its
publish, and a batch committed but never published would be missing from the bus for good. The
relay reads the store itself (the commit-ordered follow position), so whatever is committed is
published, whoever committed it and whenever the committing process died. Every worker runs one,
and one of them publishes at a time: the one holding a PostgreSQL advisory lock (a lock held by a
connection, so a relay that dies or loses the server lets another take over within a second).
Correctness does not rest on the lock: two relays that both believe they lead publish the same
events, and the stream drops the copies by message id (`turn_id:seq`); the lock only spares the
work of publishing everything once per worker.

Where to start: the leading relay writes the store position it has published up to in a
key-value bucket after each batch, and each message also carries its event's position. A relay
that starts to lead takes the later of the two (the bucket, or the stream's last message: the
previous leader may have died between its batch and the bucket), and follows the store from
there. Every event before that position is on the stream already, because a relay publishes in
store order and waits for each acknowledgement. Neither (a new deployment): from the beginning of
the store. The bucket outlives the stream's messages, which expire after a week.

Failures: a store or bus error is retried (with the same position, so nothing is skipped and a
message published twice is dropped as a copy); the worker's own commits wake the relay at once,
other processes' commits are seen within `interval`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio
import anyio.to_thread
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, NotFoundError

from fuseforks.events.codec import Envelope
from fuseforks.jetstream.locks import Leadership, Locks
from fuseforks.jetstream.streams import (
    EVENTS_STREAM,
    MSG_ID,
    POSITION_HEADER,
    RELAY_BUCKET,
    parse_position,
    position_header,
    turn_subject,
)
from fuseforks.stores.store import OrderedRecord, Position

logger = logging.getLogger("fuseforks.relay")
RETRY_DELAY = 0.5
LOCK = "relay"
STORE_HEADER = "Fuseforks-Store"
"""Which store a message's position belongs to (`OrderedRecord.identity`)."""
STANDBY = 1.0
"""Seconds between a standby relay's tries to lead, and between a leader's checks of its lock."""


class Relay:
    """Follows `store` and publishes every event; also a bus subscriber (`handle`) so that the
    process's own commits are relayed without waiting for the next poll."""

    name = "relay"

    def __init__(self, store: OrderedRecord, js: JetStreamContext, *, locks: Locks,
                 interval: float = 0.05, batch: int = 500,
                 on_lead: Callable[[], None] | None = None) -> None:
        self.on_lead = on_lead
        """Told each time this relay becomes the one that publishes."""
        self.store = store
        self.locks = locks
        self.js = js
        self.interval = interval
        self.batch = batch
        self.position: Position | None = None
        self.published = 0
        self.leading = False
        self.tried = anyio.Event()
        """Set once this relay has tried to lead (it leads now, or another one does)."""
        self._wake = anyio.Event()

    async def handle(self, batch: Sequence[Envelope]) -> None:
        self.poke()

    def poke(self) -> None:
        self._wake.set()

    async def checkpoint(self) -> Position:
        """The store position published up to: the later of the bucket's and the stream's last
        message's (`Position()` when neither has one)."""
        found = [Position()]
        kv = await self.js.key_value(RELAY_BUCKET)
        try:
            entry = await kv.get(self._key)
            if entry.value:
                found.append(Position(*parse_position(entry.value.decode())))
        except KeyNotFoundError:
            pass
        info = await self.js.stream_info(EVENTS_STREAM)
        if info.state.messages and info.state.last_seq:
            try:
                last = await self.js.get_msg(EVENTS_STREAM, seq=info.state.last_seq)
                headers = last.headers or {}
                value = headers.get(POSITION_HEADER)
                if value and headers.get(STORE_HEADER) == self._identity:
                    found.append(Position(*parse_position(value)))
            except NotFoundError:  # expired between the two calls
                pass
        return max(found)

    async def _save(self, position: Position) -> None:
        kv = await self.js.key_value(RELAY_BUCKET)
        await kv.put(self._key, position_header(position.tx, position.position).encode())

    async def run(self) -> None:
        """Relay for ever (while leading); cancel to stop."""
        while True:
            try:
                leadership = await anyio.to_thread.run_sync(self.locks.try_lead, LOCK)
            except Exception as error:
                logger.warning("relay: cannot reach the store: %s", error)
                leadership = None
            self.tried.set()
            if leadership is None:
                await anyio.sleep(STANDBY)
                continue
            self.leading = True
            if self.on_lead is not None:
                self.on_lead()
            try:
                await self._lead(leadership)
            finally:
                self.leading = False
                leadership.release()  # at once, cancelled or not: another relay may lead

    async def _lead(self, leadership: Leadership) -> None:
        """Publish from the stream's last position on, until the lock is lost."""
        self.position = None
        self._identity = await anyio.to_thread.run_sync(self.store.identity)
        self._key = f"position-{self._identity}"
        while self.position is None:
            try:
                self.position = await self.checkpoint()
            except Exception as error:
                logger.warning("relay: cannot read the stream's last position: %s", error)
                await anyio.sleep(RETRY_DELAY)
        checked = anyio.current_time()
        while True:
            if anyio.current_time() - checked > STANDBY:
                if not await anyio.to_thread.run_sync(leadership.held):
                    return
                checked = anyio.current_time()
            try:
                placed = await anyio.to_thread.run_sync(self.store.follow_encoded, self.position,
                                                        self.batch)
            except Exception as error:
                logger.warning("relay: cannot read the store: %s", error)
                await anyio.sleep(RETRY_DELAY)
                continue
            for position, turn_id, seq, envelope in placed:
                if not await self._publish(position, turn_id, seq, envelope, leadership):
                    return  # the lock was lost while the bus was away: another relay leads
                self.position = position
            if placed:
                try:
                    await self._save(self.position)
                except Exception as error:  # the stream's last message says as much
                    logger.warning("relay: cannot save the position: %s", error)
            if len(placed) < self.batch:
                with anyio.move_on_after(self.interval):
                    await self._wake.wait()
                self._wake = anyio.Event()

    async def _publish(self, position: Position, turn_id: str, seq: int, envelope: bytes,
                       leadership: Leadership) -> bool:
        """Publish one event (its envelope's JSON as stored), retrying while the bus is away;
        False if the lock was lost meanwhile (a relay that cannot publish must not hold up the
        others)."""
        headers = {MSG_ID: f"{turn_id}:{seq}", STORE_HEADER: self._identity,
                   POSITION_HEADER: position_header(position.tx, position.position)}
        while True:
            try:
                await self.js.publish(turn_subject(turn_id), envelope,
                                      headers=headers, timeout=5)
                self.published += 1
                return True
            except Exception as error:
                logger.warning("relay: cannot publish %s: %s", headers[MSG_ID], error)
                await anyio.sleep(RETRY_DELAY)
                if not await anyio.to_thread.run_sync(leadership.held):
                    return False
