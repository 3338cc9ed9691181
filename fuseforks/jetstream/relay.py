"""The relay: the store's events, published on the events stream in the store's global order.

Why a relay and not a publish after each commit: a process can die between its commit and its
publish, and a batch committed but never published would be missing from the bus for good. The
relay reads the store itself (the commit-ordered follow position), so whatever is committed is
published, whoever committed it and whenever the committing process died. Every worker runs one,
and one of them publishes at a time: the holder of the relay's lease — the same primitive as a
turn's (`fuseforks.jetstream.lease`), renewed with its worker's other leases twice a second,
taken over by a follower when it runs out or its session ends — so a leader that dies, or is
stopped, or loses the store, is replaced within seconds, and a leader that wakes after losing
the lease publishes nothing more and steps down. Correctness does not rest on the
lease: two relays that both publish publish the same events, and the stream drops the copies by
message id (`turn_id:seq`); the lease spares the work of publishing everything once per worker,
and keeps the bus moving when one relay cannot.

Where to start: the leader writes the store position it has published up to with each renewal
of the lease (the write is refused once another relay holds it), and each message also carries
its event's position and the lease epoch it was published under. A relay that starts to lead takes
the latest of the lease's position, the stream's last message's (the previous leader may have
stopped between a message and its next renewal) and, from before the lease, the bucket's
`position-<store id>`, and follows the store from there. Every event before that position is on
the stream already, because a relay publishes in store order and waits for each
acknowledgement. None of them (a new deployment): from the beginning of the store. The bucket
outlives the stream's messages, which expire after a week.

Failures: a store or bus error is retried (with the same position, so nothing is skipped and a
message published twice is dropped as a copy) for as long as the lease is held; the worker's
own commits wake the relay at once, other processes' commits are seen within `interval`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio
import anyio.to_thread
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, NotFoundError

from fuseforks.events.codec import Envelope
from fuseforks.jetstream.lease import WATCH, Lease, Leases
from fuseforks.jetstream.streams import (
    EVENTS_STREAM,
    LEASE_HEADER,
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
STORE_HEADER = "Fuseforks-Store"
"""Which store a message's position belongs to (`OrderedRecord.identity`)."""


class Relay:
    """Follows `store` and publishes every event while it holds the lease; also a bus subscriber
    (`handle`) so that the process's own commits are relayed without waiting for the next poll."""

    name = "relay"

    def __init__(self, store: OrderedRecord, js: JetStreamContext, leases: Leases, *,
                 interval: float = 0.05, batch: int = 500,
                 on_lead: Callable[[], None] | None = None,
                 on_step_down: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.js = js
        self.leases = leases
        """Its worker's leases: the relay's is taken and renewed among them."""
        self.interval = interval
        self.batch = batch
        self.on_lead = on_lead
        """Told each time this relay becomes the one that publishes."""
        self.on_step_down = on_step_down
        """Told why, each time it stops publishing."""
        self.position: Position | None = None
        self.published = 0
        self.published_in_lease = 0
        """Events this relay published under the lease it holds (or held last)."""
        self.leading = False
        self.lease: Lease | None = None
        self._found_position = ""
        self.tried = anyio.Event()
        """Set once this relay has looked at the lease (it leads now, or another one does)."""
        self._wake = anyio.Event()

    async def handle(self, batch: Sequence[Envelope]) -> None:
        self.poke()

    def poke(self) -> None:
        self._wake.set()

    async def checkpoint(self, found: str) -> Position:
        """The store position published up to: the latest of the lease's (`found`), the stream's
        last message's and the bucket's older key's (`Position()` when none has one)."""
        known = [Position()]
        if found:
            known.append(Position(*parse_position(found)))
        kv = await self.js.key_value(RELAY_BUCKET)
        try:
            entry = await kv.get(f"position-{self._identity}")  # written before the lease
            if entry.value:
                known.append(Position(*parse_position(entry.value.decode())))
        except KeyNotFoundError:
            pass
        info = await self.js.stream_info(EVENTS_STREAM)
        if info.state.messages and info.state.last_seq:
            try:
                last = await self.js.get_msg(EVENTS_STREAM, seq=info.state.last_seq)
                headers = last.headers or {}
                value = headers.get(POSITION_HEADER)
                if value and headers.get(STORE_HEADER) == self._identity:
                    known.append(Position(*parse_position(value)))
            except NotFoundError:  # expired between the two calls
                pass
        return max(known)

    async def run(self) -> None:
        """Relay for ever (while holding the lease); cancel to stop."""
        while True:
            try:
                self._identity = await anyio.to_thread.run_sync(self.store.identity)
                break
            except Exception as error:
                logger.warning("relay: cannot reach the store: %s", error)
                await anyio.sleep(RETRY_DELAY)
        while True:
            try:
                lease = await self.leases.take(f"relay-{self._identity}")
            except Exception as error:
                logger.warning("relay: cannot reach the lease: %s", error)
                lease = None
            self.tried.set()
            if lease is None:
                await anyio.sleep(WATCH)
                continue
            self.lease = lease
            self.leading = True
            token = lease.token
            self.published_in_lease = 0
            self._found_position = lease.found
            if self.on_lead is not None:
                self.on_lead()
            why = "stopping"
            try:
                why = await self._lead(lease)
            finally:
                self.leading = False
                # At once, cancelled or not, run out or not: another relay may lead (a lease
                # taken over meanwhile is not touched: the release is checked by its epoch).
                with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                    try:
                        await self.leases.release(lease, self._position_text())
                    except Exception as error:
                        logger.warning("relay: cannot free the lease: %s", error)
                if self.on_step_down is not None:
                    self.on_step_down(f"{why} ({self.published_in_lease} events published "
                                      f"under lease {token})")

    async def _lead(self, lease: Lease) -> str:
        """Publish from the position published up to, until the lease is lost; why it ended."""
        self.position = None
        while self.position is None:
            try:
                self.position = await self.checkpoint(lease.found)
            except Exception as error:
                logger.warning("relay: cannot read the stream's last position: %s", error)
                await anyio.sleep(RETRY_DELAY)
            if not lease.held():
                return self._why_not(lease)
        async with anyio.create_task_group() as group:
            async def stop_when_taken() -> None:
                await lease.lost.wait()
                group.cancel_scope.cancel()

            group.start_soon(stop_when_taken)
            await self._follow(lease)
            group.cancel_scope.cancel()
        return self._why_not(lease)

    @staticmethod
    def _why_not(lease: Lease) -> str:
        return "another relay took the lease" if lease.lost.is_set() else "the lease ran out"

    async def _follow(self, lease: Lease) -> None:
        while lease.held():
            try:
                placed = await anyio.to_thread.run_sync(self.store.follow_encoded, self.position,
                                                        self.batch)
            except Exception as error:
                logger.warning("relay: cannot read the store: %s", error)
                await anyio.sleep(RETRY_DELAY)
                continue
            for position, turn_id, seq, envelope in placed:
                if not await self._publish(position, turn_id, seq, envelope, lease):
                    return  # the lease ran out: another relay publishes from here
                self.position = position
                lease.value = self._position_text()  # written with the next renewal
            if len(placed) < self.batch:
                with anyio.move_on_after(self.interval):
                    await self._wake.wait()
                self._wake = anyio.Event()

    async def _publish(self, position: Position, turn_id: str, seq: int, envelope: bytes,
                       lease: Lease) -> bool:
        """Publish one event (its envelope's JSON as stored), retrying while the bus is away;
        False, without publishing, once the lease is not held (checked before every try)."""
        headers = {MSG_ID: f"{turn_id}:{seq}", STORE_HEADER: self._identity,
                   POSITION_HEADER: position_header(position.tx, position.position),
                   LEASE_HEADER: str(lease.token)}
        while lease.held():
            try:
                await self.js.publish(turn_subject(turn_id), envelope,
                                      headers=headers, timeout=5)
                self.published += 1
                self.published_in_lease += 1
                return True
            except Exception as error:
                logger.warning("relay: cannot publish %s: %s", headers[MSG_ID], error)
                await anyio.sleep(RETRY_DELAY)
        return False

    def _position_text(self) -> str:
        """The position to write with the lease: the one published up to, or the one found."""
        at = self.position
        if at is not None and at.position:
            return position_header(at.tx, at.position)
        return self._found_position
