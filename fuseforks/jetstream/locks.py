"""One worker runs a turn at a time: a lock per turn, among every process using the store.

A lock is a PostgreSQL session advisory lock, held by a connection of its own to the database the
workers share (made with the store's URL and connection options:
`fuseforks.stores.postgres_database`): the lock goes with the connection, so a holder that dies,
or loses the server, lets another take it. The store knows nothing of these locks; they are the
bus side's way of sharing work.

A server restart ends every session, and every lock with it, while their holders live on: a
holder keeps its lock (`Kept`) by taking it again as soon as the server is back. Nobody else can
take it while the server is away, and a turn whose request is not delivered again (its worker
still says it is alive) is not looked for by anyone else, so the holder gets it back; should
another process hold it first after all, the holder is told, and stops.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import anyio.to_thread
import psycopg

from fuseforks.core.errors import StoreError
from fuseforks.stores.postgres_database import Database
from fuseforks.stores.postgres_sql import DatabaseUrl

KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
             "keepalives_count": 3, "tcp_user_timeout": 10_000}
"""A lock session's socket, probed from both ends: a holder that vanishes without closing it
(power loss, a partition) loses the lock in seconds — the server ends its session then — not when
the operating system's default keepalive gives up (two hours); and a holder cut off from the
server learns it as soon."""
SERVER_KEEPALIVE = {"tcp_keepalives_idle": 5, "tcp_keepalives_interval": 2,
                    "tcp_keepalives_count": 3, "tcp_user_timeout": 10_000}


_KEY = "hashtext(current_schema() || ':fuseforks:' || {name})"
"""A lock's key: per schema, so that two stores in one database lock each their own."""
_FREE = f"""SELECT name FROM unnest(%s::text[]) AS name WHERE NOT EXISTS (
    SELECT 1 FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 1
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND ((classid::bigint << 32) | objid::bigint) = {_KEY.format(name="name")}::bigint)"""
"""The named locks no session holds (a lock taken with a bigint key shows its high and low 32
bits as `classid` and `objid`)."""


class HeldLock:
    """A held lock (see `Locks.try_take`)."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self._connection = connection

    def held(self) -> bool:
        """Still held: the connection that holds the lock still answers."""
        try:
            self._connection.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def release(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._connection.close()


class Locks:
    """The advisory locks of the database at `url` (the workers' shared store)."""

    def __init__(self, url: str | DatabaseUrl) -> None:
        self._database = Database(url)

    def try_take(self, name: str) -> HeldLock | None:
        """Take `name`, held by one process at a time among every process using this database,
        or None when another process holds it. Failures are one-line `StoreError`s naming the URL
        without its password."""
        with self._database.translate("lock"):
            connection = self._database.connect(
                **self._database.session(**SERVER_KEEPALIVE), **KEEPALIVE)
            try:
                connection.execute("SET statement_timeout = 5000")
                row = connection.execute(
                    f"SELECT pg_try_advisory_lock({_KEY.format(name='%s')})", [name]).fetchone()
            except BaseException:
                connection.close()
                raise
        if row is not None and row[0]:
            return HeldLock(connection)
        connection.close()
        return None

    def free(self, names: Sequence[str]) -> list[str]:
        """Which of `names` no process holds now: a look, which takes none of them."""
        with self._database.translate("lock"), self._database.connect() as connection:
            return [name for (name,) in connection.execute(_FREE, [list(names)]).fetchall()]


KEEP_CHECK = 1.0
"""Seconds between a kept lock's checks of its connection."""
logger = logging.getLogger("fuseforks.locks")


class Kept:
    """A lock kept for as long as its holder works: taken again when its connection is lost."""

    def __init__(self, locks: Locks, name: str, held: HeldLock) -> None:
        self.locks, self.name = locks, name
        self._held = held

    async def keep(self, on_taken: Callable[[], None],
                   on_again: Callable[[], None] = lambda: None) -> None:
        """Check the lock every `KEEP_CHECK` seconds until cancelled. Lost with its connection:
        take it again (`on_again`), or, when another process holds it now, call `on_taken` and
        return."""
        while True:
            await anyio.sleep(KEEP_CHECK)
            if await anyio.to_thread.run_sync(self._held.held):
                continue
            self._held.release()
            try:
                again = await anyio.to_thread.run_sync(self.locks.try_take, self.name)
            except StoreError as error:  # the server is still away: nobody can take it either
                logger.warning("lock %s: cannot take it again yet: %s", self.name, error)
                continue
            if again is None:
                on_taken()
                return
            self._held = again
            on_again()

    def release(self) -> None:
        self._held.release()
