"""Leases on the store's database: who owns a turn, or the relay, and until when — one primitive
for every kind of ownership among the processes that share a PostgreSQL store.

Why a lease and not a lock held by a connection: a process that is stopped — SIGSTOP, a paused
virtual machine, a frozen container, a debugger, a swap storm — keeps its connections, and a
lock with them; whatever it owns would wait for as long as it sleeps. A lease is held only while
its holder renews it. Why also the holder's session: a process that dies ends its sessions at
once, and what it owned need not wait for its lease to run out. So a lease is free when
released, when it ran out (its holder stopped renewing), or when the session that last renewed
it has ended (its holder died).

The fencing token: each time a lease is taken its `epoch` goes up by one, and every write the
holder makes under it carries the epoch it took (the store refuses an append whose turn's lease
has another epoch: `fuseforks.stores.postgres`). A holder that wakes after its lease was taken
over can do nothing under the old epoch; a holder whose lease ran out but that nobody took over
goes on, since nobody else acted in its place.

Time is the database server's (`clock_timestamp()`): one clock for every process. The holder's
own view (`fuseforks.jetstream.lease`) runs out first: it counts the lease from before it sent a
renewal, the server from when it ran it.

Renewals of every lease a process holds go in one statement: a worker running eight turns and
the relay renews nine leases with one round trip.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import psycopg

from fuseforks.stores.postgres_database import Database
from fuseforks.stores.postgres_sql import LEASES
from fuseforks.stores.store import Fence
from fuseforks.stores.urls import DatabaseUrl

__all__ = ["Fence", "Held", "LeaseTable", "Taken"]

KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
             "keepalives_count": 3, "tcp_user_timeout": 10_000}
"""The lease session's socket, probed from both ends: a holder that vanishes without closing it
(power loss, a partition) has its session ended by the server in seconds, and its leases free;
a holder cut off from the server learns it as soon."""
SERVER_KEEPALIVE = {"tcp_keepalives_idle": 5, "tcp_keepalives_interval": 2,
                    "tcp_keepalives_count": 3, "tcp_user_timeout": 10_000,
                    "statement_timeout": 5000}

_SESSION_ALIVE = """EXISTS (SELECT 1 FROM pg_stat_activity a
    WHERE a.pid = {row}.session AND a.backend_start = {row}.session_start)"""
_HELD = f"""{{row}}.holder <> '' AND {{row}}.expires_at > clock_timestamp()
    AND {_SESSION_ALIVE}"""
_ME = """pg_backend_pid(), (SELECT backend_start FROM pg_stat_activity
    WHERE pid = pg_backend_pid())"""

TAKE = f"""INSERT INTO {LEASES} AS l (name, holder, epoch, session, session_start, expires_at)
    VALUES (%(name)s, %(holder)s, 1, {_ME},
            clock_timestamp() + %(length)s * interval '1 second')
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, epoch = l.epoch + 1,
        session = excluded.session, session_start = excluded.session_start,
        expires_at = excluded.expires_at
    WHERE NOT ({_HELD.format(row="l")})
    RETURNING epoch, value"""
"""Take the lease when it is free (never taken, released, run out, or its session ended): the
new epoch and the value its last holder wrote; no row when another holds it."""

RENEW = f"""UPDATE {LEASES} AS l SET expires_at = clock_timestamp() + %s * interval '1 second',
        session = pg_backend_pid(),
        session_start = (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()),
        value = coalesce(k.value, l.value)
    FROM unnest(%s::text[], %s::bigint[], %s::text[]) AS k(name, epoch, value)
    WHERE l.name = k.name AND l.epoch = k.epoch AND l.holder = %s
    RETURNING l.name"""
"""Renew every lease a holder names, each at the epoch it took it (with a value to keep, or
NULL): the names still its own. A lease that ran out, or whose session ended, and that nobody
took since is still the holder's: nobody acted in its place."""

RELEASE = f"""UPDATE {LEASES} AS l SET holder = '', expires_at = clock_timestamp(),
        value = coalesce(k.value, l.value)
    FROM unnest(%s::text[], %s::bigint[], %s::text[]) AS k(name, epoch, value)
    WHERE l.name = k.name AND l.epoch = k.epoch AND l.holder = %s"""

FREE = f"""SELECT n.name FROM unnest(%s::text[]) AS n(name) WHERE NOT EXISTS (
    SELECT 1 FROM {LEASES} l WHERE l.name = n.name AND {_HELD.format(row="l")})"""


class Taken(msgspec.Struct, frozen=True):
    """A lease taken: its epoch, and the value its last holder left in it."""

    epoch: int
    value: str


class Held(msgspec.Struct, frozen=True):
    """A lease as its holder names it to renew or release it, with a value to keep (None: keep
    the one stored)."""

    name: str
    epoch: int
    value: str | None = None


class LeaseTable:
    """The leases of the store at `url`, reached on one session of their own (the session whose
    end frees them), opened again when it is lost. Safe to share between threads."""

    def __init__(self, url: str | DatabaseUrl) -> None:
        self._database = Database(url)
        self.name = self._database.name
        self._lock = threading.Lock()
        self._connection: psycopg.Connection[Any] | None = None

    @contextlib.contextmanager
    def _session(self, doing: str) -> Iterator[psycopg.Connection[Any]]:
        with self._lock, self._database.translate(doing):
            if self._connection is None or self._connection.closed:
                self._connection = self._database.connect(
                    **self._database.session(**SERVER_KEEPALIVE), **KEEPALIVE)
            try:
                yield self._connection
            except psycopg.OperationalError:
                self._connection.close()  # lost: a new session next time
                raise

    def take(self, name: str, holder: str, length: float) -> Taken | None:
        """Take `name` for `length` seconds when it is free; None while another holds it."""
        with self._session("take a lease") as connection:
            row = connection.execute(TAKE, {"name": name, "holder": holder,
                                            "length": length}).fetchone()
        return None if row is None else Taken(epoch=int(row[0]), value=str(row[1]))

    def renew(self, holder: str, held: Sequence[Held], length: float) -> set[str]:
        """Renew `held` for `length` seconds, in one statement: the names still `holder`'s."""
        if not held:
            return set()
        with self._session("renew leases") as connection:
            rows = connection.execute(RENEW, [length, *_columns(held), holder]).fetchall()
        return {name for (name,) in rows}

    def release(self, holder: str, held: Sequence[Held]) -> None:
        """Free `held` (those still at their epochs), keeping the values given."""
        if held:
            with self._session("release leases") as connection:
                connection.execute(RELEASE, [*_columns(held), holder])

    def free(self, names: Sequence[str]) -> list[str]:
        """Which of `names` nobody holds now: a look, which takes none of them."""
        with self._session("look at leases") as connection:
            return [name for (name,) in connection.execute(FREE, [list(names)]).fetchall()]

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                with contextlib.suppress(psycopg.Error):
                    self._connection.close()
                self._connection = None


def _columns(held: Sequence[Held]) -> list[list[Any]]:
    return [[h.name for h in held], [h.epoch for h in held], [h.value for h in held]]
