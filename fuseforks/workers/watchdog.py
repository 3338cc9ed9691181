"""What a worker does about the other workers: it says, twice a second, that it is alive and
which turns it runs, and it hands back to the queue the requests of a worker that fell silent and
whose turns' leases are free — so the turns of a worker that died, or was stopped, are taken over
in seconds, not after the queue's ack wait (`fuseforks.jetstream.roster` says why both signs are
needed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio
from nats.aio.client import Client

from fuseforks.jetstream.lease import Leases, turn_lease
from fuseforks.jetstream.roster import BEAT, Roster, Running, Silent, hand_back

logger = logging.getLogger("fuseforks.worker")


class Watchdog:
    def __init__(self, roster: Roster, leases: Leases, connection: Client,
                 running: Callable[[], Sequence[Running]], say: Callable[[str], None]) -> None:
        """`running`: the turns this worker runs now, with their requests' reply subjects."""
        self.roster, self.leases, self.connection = roster, leases, connection
        self.running, self.say = running, say
        self._leaving = anyio.Event()
        self._writing = anyio.Lock()

    async def run(self) -> None:
        """Beat and watch until `leave()`."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._beat)
            group.start_soon(self._watch)
            await self._leaving.wait()
            group.cancel_scope.cancel()

    async def leave(self) -> None:
        """Stop beating and remove this worker's entry: the others need not wait for its
        silence."""
        self._leaving.set()
        try:
            await self.roster.leave()
        except Exception as error:
            logger.warning("worker: cannot leave the roster: %s", error)

    async def beat(self) -> None:
        """Write this worker's entry now (a turn it is about to run must be in it before the
        turn does anything: a worker killed a moment later is known to have run it)."""
        try:
            with anyio.fail_after(BEAT):
                async with self._writing:  # one at a time: the last written is the latest
                    await self.roster.beat(self.running())
        except Exception as error:  # the bus is away: the others find the leases held
            logger.warning("worker: cannot write its roster entry: %s", error)

    async def _beat(self) -> None:
        while True:
            await self.beat()
            await anyio.sleep(BEAT)

    async def _watch(self) -> None:
        while True:
            await anyio.sleep(BEAT)
            try:
                for silent in await self.roster.silent():
                    await self._take_charge(silent)
            except Exception as error:
                logger.warning("worker: cannot look at the other workers: %s", error)

    async def _take_charge(self, silent: Silent) -> None:
        """A silent worker's requests go back to the queue if its turns' leases are free (run
        out, or their session ended); one whose leases are renewed is alive after all."""
        leases = {turn_lease(turn.turn_id): turn for turn in silent.turns}
        free = set(await self.leases.free(list(leases))) if leases else set()
        if leases and not free:
            return
        if not await self.roster.claim(silent) or not free:
            return
        orphans = [turn for name, turn in leases.items() if name in free]
        await hand_back(self.connection, orphans)
        self.say(f"worker {silent.worker} fell silent; its turns go back to the queue: "
                 f"{', '.join(turn.turn_id for turn in orphans)}")
