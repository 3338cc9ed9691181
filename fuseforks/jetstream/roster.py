"""Workers watching each other: each says, twice a second, which turns it runs; the turns of one
that falls silent go back to the queue at once, instead of after the queue's ack wait.

Why: a request goes to another worker when its worker stops telling the queue it is alive, after
`ACK_WAIT` (10 s) — long enough that a worker busy for a moment, or a bus that paused, does not
hand a running turn to a second worker. A worker that died, or was stopped, can be known sooner,
by two signs that agree: it has stopped writing its entry in the roster (`FUSEFORKS_WORKERS`, one
key per worker: the turns it runs, with the reply subject of each one's request), and the leases
of its turns are free (run out, since nothing renews them, or freed at once with the session of a
process that died: `fuseforks.stores.leases`). Either sign alone can lie — a worker whose loop
stalls stops writing for a moment; a worker cut off from the bus still renews its leases — so it
takes both. Then any worker that notices claims the silent one's entry (a delete checked against
the revision it saw: one claimant wins) and negatively acknowledges each of those requests on its
behalf (`-NAK` on the reply subject): the queue delivers each at once, to whichever worker has a
free slot, which takes its lease and takes the turn over. The lease still decides who runs a
turn: a request delivered while its lease is held waits in the queue.

Timing: an entry is written every `BEAT` (0.5 s) and a worker looks at every other entry as
often; one seen unchanged for `SILENT` (1.5 s) is silent. A worker killed is noticed 1.5–2 s
later (a stopped one once its leases ran out, 3 s after its last renewal), and its turns are
taken over as soon as a worker has a free slot. Each worker reads one entry per worker per look:
the roster costs `2 × workers²` reads a second in all (a few hundred for ten workers), and one
query of the leases per silent worker.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Sequence

import msgspec
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import APIError, KeyNotFoundError, NotFoundError

from fuseforks.jetstream.sightings import Sightings

ROSTER_BUCKET = "FUSEFORKS_WORKERS"
BEAT = 0.5
"""Seconds between a worker's writes of its roster entry, and between its looks at the others'."""
SILENT = 1.5
"""Seconds an entry must be seen unchanged before its worker counts as silent."""
KEPT = 60.0
"""Seconds the server keeps an entry no one writes any more (a dead worker's, once read)."""
_KEY = re.compile(r"^[-_=A-Za-z0-9]{1,100}$")


class Running(msgspec.Struct, frozen=True):
    turn_id: str
    reply: str
    """Where the turn's request is acknowledged: a `-NAK` there hands it back to the queue."""


class Entry(msgspec.Struct, frozen=True, omit_defaults=True):
    worker: str
    turns: list[Running] = []


class Silent(msgspec.Struct, frozen=True):
    """A worker gone silent: its name, its turns, and the revision of its entry last seen."""

    worker: str
    turns: list[Running]
    key: str
    revision: int


_decode = msgspec.json.Decoder(Entry).decode


def roster_key(worker: str) -> str:
    """A worker's key: its name when the name is one key token, else a digest of it."""
    return worker if _KEY.match(worker) else "h-" + hashlib.sha256(worker.encode()).hexdigest()


async def ensure_roster(js: JetStreamContext) -> None:
    try:
        await js.key_value(ROSTER_BUCKET)
    except NotFoundError:
        await js.create_key_value(KeyValueConfig(bucket=ROSTER_BUCKET, history=1, ttl=KEPT,
                                                 storage=StorageType.FILE))


class Roster:
    """One worker's side of the roster: its own entry, and its look at the others'."""

    def __init__(self, js: JetStreamContext, worker: str) -> None:
        self.js = js
        self.worker = worker
        self.key = roster_key(worker)
        self._sightings = Sightings()

    async def beat(self, turns: Sequence[Running]) -> None:
        """Write this worker's entry: it is alive and runs `turns`."""
        kv = await self.js.key_value(ROSTER_BUCKET)
        await kv.put(self.key, msgspec.json.encode(Entry(worker=self.worker, turns=list(turns))))

    async def leave(self) -> None:
        kv = await self.js.key_value(ROSTER_BUCKET)
        await kv.delete(self.key)

    async def silent(self) -> list[Silent]:
        """The other workers whose entries have stood still for `SILENT` seconds."""
        kv = await self.js.key_value(ROSTER_BUCKET)
        prefix = f"$KV.{ROSTER_BUCKET}."
        info = await self.js.stream_info(f"KV_{ROSTER_BUCKET}", subjects_filter=f"{prefix}>")
        keys = [s.removeprefix(prefix) for s in info.state.subjects or {}]
        found = []
        now = time.monotonic()
        for key in keys:
            if key == self.key:
                continue
            try:
                entry = await kv.get(key)
            except KeyNotFoundError:  # left, or claimed
                continue
            revision = entry.revision or 0
            if self._sightings.still(key, revision, now) >= SILENT:
                value = _decode(entry.value or b"{}")
                found.append(Silent(worker=value.worker, turns=value.turns, key=key,
                                    revision=revision))
        self._sightings.forget(*keys)
        return found

    async def claim(self, silent: Silent) -> bool:
        """Take charge of a silent worker's turns: its entry is removed if it still stands as
        seen (one claimant wins; a worker that wrote again meanwhile is not silent)."""
        kv = await self.js.key_value(ROSTER_BUCKET)
        try:
            await kv.delete(silent.key, last=silent.revision)
        except APIError as error:
            if error.err_code in (10071, 10164):  # the entry moved on since it was seen
                return False
            raise
        return True


async def hand_back(connection: Client, turns: Sequence[Running]) -> None:
    """Negatively acknowledge each turn's request on its dead worker's behalf: the queue
    delivers it again at once."""
    for turn in turns:
        await connection.publish(turn.reply, b"-NAK")
    await connection.flush()
