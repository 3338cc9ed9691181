"""The scale-out mode on one machine: PostgreSQL, NATS, workers, the simulator and the camera.

Everything lives in one data folder, so a second start finds the turns of the first:

    DATA/postgres/      the PostgreSQL data folder (reached through DATA/run/, a Unix socket)
    DATA/nats/          NATS's JetStream store and log
    DATA/logs/          one log per worker and one for the simulator
    DATA/mcp.json       the MCP servers the workers start (the demo camera)

Every process is a child of this one and dies with it, whatever ends it; a clean stop (Ctrl-C)
lets the workers finish or hand back their turns first, then stops the servers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import get_args

import msgspec

from fuseforks.cluster.child import stop
from fuseforks.cluster.nats import NatsProcess, port_taken
from fuseforks.cluster.postgres import EmbeddedPostgres
from fuseforks.core.errors import ClusterError
from fuseforks.core.leash import leashed
from fuseforks.core.names import WireName
from fuseforks.demo.offline import CAMERA_SERVER, CAMERA_TOOL
from fuseforks.wires.registry import KEY_VARIABLES

DATABASE = "fuseforks"
SIMULATOR_KEY = "sk-fuseforks-cluster-simulator"
"""The key workers present to the local simulator (it checks that one is sent, like a provider)."""


def worker_environment(environ: Mapping[str, str], *, simulator: bool) -> dict[str, str]:
    """A worker's environment: this process's, and on the simulator its key in every variable a
    wire reads a key from (the registry's list), so no real key of this environment is sent to
    the simulator, whichever of a wire's variables it is in."""
    env = dict(environ)
    if simulator:
        env |= dict.fromkeys(KEY_VARIABLES, SIMULATOR_KEY)
    return env


class ClusterSettings(msgspec.Struct, frozen=True, kw_only=True):
    data: Path
    workers: int = 2
    concurrency: int = 4
    nats_port: int = 4222
    simulator: bool = True
    """Workers talk to the local simulator; without it, to the real providers with the keys of
    this process's environment."""


class Started(msgspec.Struct, frozen=True, kw_only=True):
    """What a user needs to reach the cluster."""

    db_url: str
    nats_url: str
    simulator_url: str | None
    workers: list[str]


class LocalCluster:
    def __init__(self, settings: ClusterSettings, say: Callable[[str], None]) -> None:
        self.settings, self.say = settings, say
        data = settings.data.resolve()
        self.data = data
        self.postgres = EmbeddedPostgres(data / "postgres", socket_dir=data / "run")
        self.nats = NatsProcess(data / "nats", settings.nats_port)
        self.logs = data / "logs"
        self._simulator: subprocess.Popen[str] | None = None
        self._workers: dict[str, subprocess.Popen[bytes]] = {}

    def start(self) -> Started:
        if port_taken(self.settings.nats_port):
            raise ClusterError(f"port {self.settings.nats_port} on 127.0.0.1 is taken "
                               "(another NATS?): choose another with --nats-port")
        self.logs.mkdir(parents=True, exist_ok=True)
        fresh = not self.postgres.initialized()
        self.say(f"PostgreSQL: {'creating' if fresh else 'starting'} {self.postgres.data}")
        self.postgres.init()
        self.postgres.start()
        db_url = self.postgres.ensure_database(DATABASE)
        self.say(f"NATS: starting on 127.0.0.1:{self.settings.nats_port}")
        self.nats.start()
        simulator_url = self._start_simulator() if self.settings.simulator else None
        config = self.data / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {CAMERA_SERVER: {
            "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}, indent=2))
        for index in range(1, self.settings.workers + 1):
            self._start_worker(f"w{index}", db_url, config, simulator_url)
        for name in self._workers:
            self._wait_ready(name)
        return Started(db_url=db_url, nats_url=self.nats.url, simulator_url=simulator_url,
                       workers=list(self._workers))

    def _start_simulator(self) -> str:
        command = [sys.executable, "-m", "fuseforks", "simulator", "--port", "0",
                   "--call", CAMERA_TOOL]
        with open(self.logs / "simulator.log", "ab") as log:
            self._simulator = subprocess.Popen(leashed(command), stdout=subprocess.PIPE,
                                               stderr=log, text=True)
        assert self._simulator.stdout is not None
        first = self._simulator.stdout.readline().strip()
        prefix = "simulator: listening on "
        if not first.startswith(prefix):
            raise ClusterError(f"the simulator did not start; its log: {self.logs}/simulator.log")
        return first[len(prefix):]

    def _start_worker(self, name: str, db_url: str, config: Path,
                      simulator_url: str | None) -> None:
        from fuseforks.simulator.server import WIRE_PREFIXES

        command = [sys.executable, "-m", "fuseforks", "worker", "--db", db_url,
                   "--nats", self.nats.url, "--mcp-config", str(config), "--name", name,
                   "--concurrency", str(self.settings.concurrency)]
        env = worker_environment(os.environ, simulator=simulator_url is not None)
        if simulator_url is not None:
            for wire in get_args(WireName):
                command += ["--base-url", f"{wire}={simulator_url}{WIRE_PREFIXES[wire]}"]
        with open(self.logs / f"worker-{name}.log", "ab") as log:
            self._workers[name] = subprocess.Popen(
                leashed(command), stdout=log, stderr=subprocess.STDOUT,
                env=env | {"PYTHONUNBUFFERED": "1"})

    def _wait_ready(self, name: str, timeout: float = 120.0) -> None:
        log = self.logs / f"worker-{name}.log"
        process = self._workers[name]
        deadline = time.monotonic() + timeout
        while f"worker {name}: ready" not in log.read_text(errors="replace"):
            if process.poll() is not None:
                raise ClusterError(f"worker {name} exited ({process.returncode}); its log: {log}")
            if time.monotonic() > deadline:
                raise ClusterError(f"worker {name} was not ready within {timeout:g} s; its log: "
                                   f"{log}")
            time.sleep(0.1)

    @property
    def running(self) -> bool:
        """Whether any process of the cluster was started (and so needs stopping)."""
        return any(p is not None for p in (self.postgres.process, self.nats.process,
                                           self._simulator, *self._workers.values()))

    def dead_worker(self) -> str | None:
        """The name of a worker that ended on its own, if one did."""
        for name, process in self._workers.items():
            if process.poll() is not None:
                return name
        return None

    def stop(self) -> None:
        """Workers first (each finishes or hands back its turns), then the servers."""
        for process in self._workers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name, process in self._workers.items():
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.say(f"worker {name} did not stop within 60 s: killed")
                process.kill()
                process.wait()
        stop(self._simulator)
        if self._simulator is not None and self._simulator.stdout is not None:
            self._simulator.stdout.close()
        self.nats.stop()
        self.postgres.stop()
