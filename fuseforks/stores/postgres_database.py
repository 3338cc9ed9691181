"""A PostgreSQL database as fuseforks reaches it, whoever connects: the store (its pool) and the
leases' session (`fuseforks.stores.leases`) make their connections here, with the same
options, and say psycopg's errors the same way — one line, naming the URL without its password.

Importing it imports psycopg: only a program that opens a PostgreSQL URL does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import PoolTimeout

from fuseforks.core.errors import StoreError
from fuseforks.events.privacy import PixelLeakError
from fuseforks.stores.urls import DatabaseUrl, redact_url, url_password

CONNECT_TIMEOUT = 10
"""Seconds to reach the server, unless the URL says `connect_timeout`."""
IDLE_IN_WRITE = 2.0
"""Seconds a writing session may sit inside a transaction without running a statement before
the server ends it (`idle_in_transaction_session_timeout`). A transaction that holds an id holds
back every follower of the global order until it ends (`PostgresStore.follow`), so a writer
stopped between an insert and its commit — a process paused or stuck — must not hold it for
long. The store's own appends are one statement each and never sit idle in a transaction; this
bounds any other transaction opened on the same options."""


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class Database:
    """A PostgreSQL database as fuseforks reaches it: every connection made with the same
    options (autocommit, a connect timeout, named `fuseforks`; read-only transactions for a
    reader), and psycopg's errors said as the project's own — one line, naming the URL without
    its password.

    `url`: `postgresql://user:password@host:port/database` (libpq's URL form, parameters
    included)."""

    def __init__(self, url: str | DatabaseUrl, *, read_only: bool = False) -> None:
        self.url = url.url if isinstance(url, DatabaseUrl) else url
        self.name = redact_url(self.url)
        """The URL as every message shows it: without its password."""
        self.read_only = read_only
        self._secret = url_password(self.url)
        self.options = self._connection_options()

    def _connection_options(self) -> dict[str, Any]:
        try:
            given = conninfo_to_dict(self.url)
        except psycopg.ProgrammingError as error:
            raise StoreError(f"{self.name}: not a usable PostgreSQL URL "
                             f"({self.scrub(one_line(error))})") from None
        options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in given:
            options["connect_timeout"] = CONNECT_TIMEOUT
        if "application_name" not in given:
            options["application_name"] = "fuseforks"
        if self.read_only:
            options["options"] = " ".join(
                filter(None, [str(given.get("options", "")),
                              "-c default_transaction_read_only=on"]))
        return options

    def session(self, **settings: int) -> dict[str, Any]:
        """The connection options with server settings for the session (`-c name=value`, after
        any the URL gives)."""
        given = str(self.options.get("options", conninfo_to_dict(self.url).get("options", "")))
        added = [f"-c {name}={value}" for name, value in settings.items()]
        return {**self.options, "options": " ".join(filter(None, [given, *added]))}

    def writing(self, statement_timeout: float = 0.0) -> dict[str, Any]:
        """The options of a session that writes the store: a transaction it leaves idle is
        ended by the server after `IDLE_IN_WRITE` seconds, and with `statement_timeout` a
        statement is cancelled after that many seconds."""
        settings = {"idle_in_transaction_session_timeout": round(IDLE_IN_WRITE * 1000)}
        if statement_timeout:
            settings["statement_timeout"] = round(statement_timeout * 1000)
        return self.session(**settings)

    def connect(self, **settings: Any) -> psycopg.Connection[Any]:
        """A connection of its own (not a pooled one), `settings` added to the options."""
        return psycopg.connect(self.url, **{**self.options, **settings})

    def scrub(self, text: str) -> str:
        if len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text

    @contextmanager
    def translate(self, doing: str) -> Iterator[None]:
        """psycopg's errors as the project's own: one line, naming the URL without password."""
        try:
            yield
        except (StoreError, PixelLeakError, ValueError):
            raise
        except psycopg.errors.ReadOnlySqlTransaction as error:
            raise StoreError(f"{self.name}: {doing}: the store was opened read-only "
                             f"({self.scrub(one_line(error))}); nothing was changed") from None
        except PoolTimeout:
            raise StoreError(f"{self.name}: {doing} failed: {self._unreachable()}") from None
        except psycopg.OperationalError as error:
            detail = self.scrub(one_line(error))
            if doing == "open":
                raise StoreError(f"{self.name}: cannot connect to PostgreSQL ({detail})") from None
            raise StoreError(f"{self.name}: {doing} failed: {detail}") from None
        except psycopg.Error as error:
            raise StoreError(
                f"{self.name}: {doing} failed: {self.scrub(one_line(error))}") from None

    def _unreachable(self) -> str:
        """Why no pooled connection came in time: the server's own answer, if it gives one."""
        try:
            with self.connect():
                pass
        except psycopg.Error as error:
            return f"cannot connect to PostgreSQL ({self.scrub(one_line(error))})"
        return "no connection of the pool was free in time"
