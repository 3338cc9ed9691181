"""A process's leases, as their holder sees them: the relay's leadership and each turn a worker
runs, taken, renewed together and given up through one primitive (the table and its rules:
`fuseforks.stores.leases`).

The holder's view runs out first. A lease counts, for its holder, from the moment before it sent
the renewal that kept it (its own monotonic clock); on the server, from when the renewal ran. So
while the holder believes it holds a lease, nobody else can have taken it — and once its own
view has run out, it does nothing more under it: the relay publishes nothing, a turn sends no
request and calls no tool, its writes carrying the lease's epoch being refused anyway once
another holder took it (`Lease.fence`).

Timing (`LEASE` 3 s, renewed every `RENEW` 0.5 s, a free lease looked for every `WATCH` 0.5 s):
- every lease a process holds is renewed in one statement every `RENEW`; a renewal the server
  refuses (the lease is at another epoch) marks that lease `lost`, and its holder stops what it
  did under it; a renewal that cannot reach the server extends nothing: the holder's view runs
  out by itself, and a later renewal takes the lease back if nobody took it meanwhile;
- a process that is stopped renews nothing: its leases are free `LEASE` after its last renewal,
  and taken within `WATCH` by whoever looks for them (a relay that follows, a worker handed the
  turn's request). A process that dies ends its session, which frees its leases at once;
- a shorter `LEASE` takes a stopped process's work over sooner, and costs more renewals: each
  process renews `1 / RENEW` times a second, whatever it holds, so `RENEW` sets the cost on the
  store and `LEASE / RENEW` how many renewals in a row may fail (a slow statement, a pause of the
  event loop) before a lease runs out under a holder that is alive.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import anyio
import anyio.to_thread

from fuseforks.core.errors import StoreError
from fuseforks.stores.leases import Fence, Held, LeaseTable

logger = logging.getLogger("fuseforks.lease")

LEASE = 3.0
"""Seconds a lease lasts after the renewal that kept it."""
RENEW = 0.5
"""Seconds between a holder's renewals (of all its leases at once)."""
WATCH = 0.5
"""Seconds between two looks for a free lease."""


class Lease:
    """One lease, held: its name, the epoch it was taken at (the fencing token) and the value
    written with it (the relay's position)."""

    def __init__(self, name: str, holder: str, epoch: int, found: str, until: float) -> None:
        self.name, self.holder, self.epoch = name, holder, epoch
        self.found = found
        """The value its previous holder left in it."""
        self.value: str | None = None
        """What the next renewal writes with it (None: leave it as it is)."""
        self.until = until
        self.lost = anyio.Event()
        """Set when a renewal found it taken over: nothing more is done under it."""

    @property
    def token(self) -> int:
        return self.epoch

    @property
    def fence(self) -> Fence:
        return Fence(name=self.name, holder=self.holder, epoch=self.epoch)

    def held(self) -> bool:
        """Held, by the holder's own clock, and not found taken over."""
        return not self.lost.is_set() and time.monotonic() < self.until

    def _held(self) -> Held:
        return Held(name=self.name, epoch=self.epoch, value=self.value)


class Leases:
    """The leases one process holds on one store, renewed together (`run`)."""

    def __init__(self, table: LeaseTable, holder: str, *, length: float = LEASE,
                 every: float = RENEW,
                 on_lost: Callable[[Lease], None] | None = None) -> None:
        self.table, self.holder = table, holder
        self.length, self.every = length, every
        self.on_lost = on_lost
        """Told of each lease a renewal found taken over."""
        self._held: dict[str, Lease] = {}
        self.renewals = 0
        """Renewal statements sent (each renews every lease held)."""

    async def take(self, name: str) -> Lease | None:
        """Take `name` when it is free; None while another process holds it."""
        sent = time.monotonic()  # before the call: the lease counts from no later than this
        taken = await anyio.to_thread.run_sync(self.table.take, name, self.holder, self.length)
        if taken is None:
            return None
        lease = Lease(name, self.holder, taken.epoch, taken.value, sent + self.length)
        self._held[name] = lease
        return lease

    async def release(self, lease: Lease, value: str | None = None) -> None:
        """Give `lease` up (keeping `value` in it, if given), unless it was taken over."""
        self._held.pop(lease.name, None)
        if lease.lost.is_set():
            return
        lease.until = 0.0
        held = Held(name=lease.name, epoch=lease.epoch, value=value)
        await anyio.to_thread.run_sync(self.table.release, self.holder, [held])

    def fence_of(self, turn_id: str) -> Fence | None:
        """The fence of a turn this process holds the lease of (`turn_lease`)."""
        lease = self._held.get(turn_lease(turn_id))
        return None if lease is None else lease.fence

    async def free(self, names: Sequence[str]) -> list[str]:
        """Which of `names` nobody holds now."""
        return await anyio.to_thread.run_sync(self.table.free, list(names))

    async def renew(self) -> None:
        """Renew every lease held, in one statement."""
        leases = [lease for lease in self._held.values() if not lease.lost.is_set()]
        if not leases:
            return
        sent = time.monotonic()
        kept = await anyio.to_thread.run_sync(
            self.table.renew, self.holder, [lease._held() for lease in leases], self.length)
        self.renewals += 1
        for lease in leases:
            if lease.name in kept:
                lease.until = sent + self.length
            elif self._held.get(lease.name) is lease:  # not released meanwhile: taken over
                self._held.pop(lease.name, None)
                lease.until = 0.0
                lease.lost.set()
                if self.on_lost is not None:
                    self.on_lost(lease)

    async def run(self) -> None:
        """Renew every `every` seconds until cancelled. A store that cannot be reached extends
        nothing; the leases run out by themselves, and come back with the next renewal that
        gets through if nobody took them."""
        while True:
            await anyio.sleep(self.every)
            try:
                await self.renew()
            except StoreError as error:
                logger.warning("%s: cannot renew its leases: %s", self.holder, error)


def turn_lease(turn_id: str) -> str:
    """The name of a turn's lease."""
    return f"turn:{turn_id}"
