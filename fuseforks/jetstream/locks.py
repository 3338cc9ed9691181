"""Leadership among processes: one relay publishes at a time, one worker runs a turn at a time.

A lock is a PostgreSQL session advisory lock, held by a connection of its own to the database the
workers share (made with the store's URL and connection options:
`fuseforks.stores.postgres_database`): the lock goes with the connection, so a holder that dies,
or loses the server, lets another take it. The store knows nothing of these locks; they are the
bus side's way of sharing work.
"""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg

from fuseforks.stores.postgres_database import Database
from fuseforks.stores.postgres_sql import DatabaseUrl

KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
             "keepalives_count": 3, "tcp_user_timeout": 10_000}
"""A holder that vanishes without closing its socket (power loss, a partition) must lose the lock
in seconds, not when the server's default keepalive gives up."""


class Leadership:
    """A held lock (see `Locks.try_lead`)."""

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

    def try_lead(self, name: str) -> Leadership | None:
        """Become the one holder of `name` among every process using this database, or None
        when another process holds it. Failures are one-line `StoreError`s naming the URL
        without its password."""
        with self._database.translate("lock"):
            connection = self._database.connect(autocommit=True, **KEEPALIVE)
            try:
                connection.execute("SET statement_timeout = 5000")
                # Per schema: two stores in one database lead each their own.
                row = connection.execute(
                    "SELECT pg_try_advisory_lock(hashtext(current_schema() || ':fuseforks:' "
                    "|| %s))", [name]).fetchone()
            except BaseException:
                connection.close()
                raise
        if row is not None and row[0]:
            return Leadership(connection)
        connection.close()
        return None
