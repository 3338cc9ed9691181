"""The relay's lease: which relay publishes, kept only while it renews it.

Why a lease and not a lock held by a connection: a relay that is stopped — SIGSTOP, a long pause,
a virtual machine moved — keeps its connections, and a lock with them; the others would wait for
as long as it sleeps, and the whole bus with them. A lease runs out unless its holder renews it,
so a holder that stops renewing, for whatever reason, is replaced within a bound.

Where it lives: one key of the relay bucket per store (`lease-<store id>` in `FUSEFORKS_RELAY`),
whose value names the holder and the store position it has published up to. Every write is
checked against the key's revision (`update(last=revision)`), and the revision is the fencing
token: whoever takes the lease writes a new revision, so the writes of a holder that lost it —
its renewals, and with them its position — are refused, whatever it believes. The bucket lives
where the position must live anyway, beside the stream it describes (a new NATS deployment
starts both afresh), and its time is each process's own monotonic clock, never two clocks
compared.

Timing (`LEASE` 3 s, renewed every `RENEW` 0.5 s, looked at every `WATCH` 0.5 s):
- the holder holds the lease until `LEASE` after it *sent* its last renewal that succeeded, by
  its own clock; past that it publishes nothing (the relay checks before every message) and
  steps down;
- a follower reads the key every `WATCH`; a revision it has seen unchanged for `LEASE` of its own
  clock has run out, and it takes the lease over with `update(last=that revision)` (one follower
  wins). A follower sees a revision only after the holder sent it, so the holder's own view runs
  out first: two relays never both believe they hold it;
- so a follower leads within `LEASE + 2 × WATCH` (4 s) of the holder's last renewal, at most 1 s
  after the lease ran out, and publishes from the position at once;
- a holder that stops cleanly frees the lease (its holder empty, its position kept): a follower
  takes it at its next look.

A holder that is stopped between its check and its send can still put one message on the wire
after the lease ran out: the same event, with the same message id, that its successor publishes,
so the stream keeps one of them; its renewal, and its position, are refused.
"""

from __future__ import annotations

import time

import msgspec
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from fuseforks.core.errors import LeaseLost
from fuseforks.jetstream.sightings import Sightings
from fuseforks.jetstream.streams import RELAY_BUCKET

LEASE = 3.0
"""Seconds a lease lasts after the renewal that kept it."""
RENEW = 0.5
"""Seconds between the holder's renewals."""
WATCH = 0.5
"""Seconds between a follower's looks at the lease."""


class LeaseValue(msgspec.Struct, frozen=True, omit_defaults=True):
    holder: str = ""
    """The relay that holds the lease; empty: free."""
    position: str = ""
    """The store position published up to (`tx.position`), empty before the first."""


_decode = msgspec.json.Decoder(LeaseValue).decode


class Lease:
    """One relay's view of the lease of one store."""

    def __init__(self, js: JetStreamContext, store_id: str, holder: str, *,
                 length: float = LEASE) -> None:
        self.js = js
        self.key = f"lease-{store_id}"
        self.holder = holder
        self.length = length
        self.token = 0
        """The revision at which this relay took the lease (0: it does not hold it)."""
        self._revision = 0
        """The last revision this relay wrote."""
        self._until = 0.0
        self._sightings = Sightings()

    def held(self) -> bool:
        """This relay holds the lease, by its own clock."""
        return bool(self.token) and time.monotonic() < self._until

    async def take(self) -> LeaseValue | None:
        """One look at the lease: take it when it is free, has run out, or is still the one this
        relay last wrote; return the value found (with its position), or None while another
        relay holds it."""
        kv = await self.js.key_value(RELAY_BUCKET)
        now = time.monotonic()  # before the write: the lease counts from no later than its send
        try:
            entry = await kv.get(self.key)
        except KeyNotFoundError:
            found = LeaseValue()
            write = kv.create(self.key, self._value(""))
        else:
            found = _decode(entry.value or b"{}")
            revision = entry.revision or 0
            free = not found.holder
            ours = revision == self._revision
            run_out = self._sightings.still(self.key, revision, now) >= self.length
            if not (free or ours or run_out):
                return None
            write = kv.update(self.key, self._value(found.position), last=revision)
        try:
            self._revision = self.token = await write
        except KeyWrongLastSequenceError:  # another relay was quicker
            return None
        self._until = now + self.length
        return found

    async def renew(self, position: str) -> None:
        """Renew the lease and write the position with it; `LeaseLost` if another relay took it
        over (the write is refused)."""
        kv = await self.js.key_value(RELAY_BUCKET)
        sent = time.monotonic()
        try:
            self._revision = await kv.update(self.key, self._value(position), last=self._revision)
        except KeyWrongLastSequenceError:
            self.token, self._until = 0, 0.0
            raise LeaseLost(f"another relay holds {self.key}") from None
        self._until = sent + self.length

    async def release(self, position: str) -> None:
        """Free the lease, keeping the position, for a follower to take at once."""
        self.token, self._until = 0, 0.0
        kv = await self.js.key_value(RELAY_BUCKET)
        self._revision = await kv.update(self.key, msgspec.json.encode(
            LeaseValue(position=position)), last=self._revision)

    def _value(self, position: str) -> bytes:
        return msgspec.json.encode(LeaseValue(holder=self.holder, position=position))
