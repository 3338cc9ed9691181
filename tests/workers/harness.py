"""Real processes for the worker tests: the provider simulator, `fuseforks worker`s with the demo
camera over stdio, and `fuseforks log --follow`, around a PostgreSQL database and a NATS server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import anyio
import psycopg

from fuseforks.demo.offline import CAMERA_TOOL
from fuseforks.events.codec import Envelope
from fuseforks.jetstream.streams import connect, ensure_streams
from fuseforks.jetstream.work import WorkRequest, submit
from fuseforks.simulator.server import WIRE_PREFIXES
from fuseforks.stores.postgres import PostgresStore
from tests.helpers import processes

WIRES = ("anthropic", "openai-compat", "gemini", "openai-responses")
MODELS = {"anthropic": "claude-sonnet-5-5", "openai-compat": "gpt-oss-120b",
          "gemini": "gemini-3.8-flash", "openai-responses": "gpt-6-sol"}

SHUTTER = Path(__file__).with_name("shutter.py")
RELAYING = "relaying the store's events to the bus"
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-worker", "OPENAI_API_KEY": "sk-worker",
        "GEMINI_API_KEY": "g-worker", "XAI_API_KEY": "x-worker", "META_API_KEY": "m-worker",
        "PERPLEXITY_API_KEY": "p-worker"}
"""The workers' own keys (the simulator wants one); a submitter never sends a key."""


class Cluster:
    def __init__(self, pg_url: str, nats_url: str, root: Path, *, latency: float = 0.0,
                 exposure: float = 0.0, rounds: int = 1, concurrency: int = 4,
                 shutter: bool = False) -> None:
        """`shutter`: the workers' camera is `tests/workers/shutter.py`, which counts its frames
        in one file for every worker and hands each back only once the test opens its gate
        (`open_shutter`)."""
        self.pg_url, self.nats_url, self.root = pg_url, nats_url, root
        self.latency, self.exposure, self.rounds = latency, exposure, rounds
        self.shutter = shutter
        self.concurrency = concurrency
        self.record_dir = root / "requests"
        self.workers: dict[str, subprocess.Popen[str]] = {}
        self.follower: subprocess.Popen[str] | None = None
        self._simulator: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> Cluster:
        command = [sys.executable, "-m", "fuseforks", "simulator", "--port", "0",
                   "--call", CAMERA_TOOL, "--rounds", str(self.rounds),
                   "--record-requests", str(self.record_dir)]
        if self.latency:
            command += ["--latency", str(self.latency)]
        self._simulator = processes.spawn(command, stdout=subprocess.PIPE,
                                           stderr=subprocess.DEVNULL, text=True)
        assert self._simulator.stdout is not None
        first = self._simulator.stdout.readline().strip()
        assert first.startswith("simulator: listening on "), first
        self.base_url = first.removeprefix("simulator: listening on ")
        camera = [sys.executable, "-m", "fuseforks.demo.camera"]
        if self.exposure:
            camera += ["--exposure", str(self.exposure)]
        server: dict[str, object] = {"command": camera[0], "args": camera[1:]}
        if self.shutter:
            server = {"command": sys.executable, "args": [str(SHUTTER)],
                      "env": {"SHUTTER_COUNT": str(self.root / "shutter.count"),
                              "SHUTTER_GATE": str(self.root / "shutter.gate"),
                              "PYTHONPATH": str(SHUTTER.parents[2])}}
        (self.root / "mcp.json").write_text(json.dumps({"mcpServers": {"nik": server}}))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        for process in [*self.workers.values(), self.follower, self._simulator]:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(timeout=20)

    def start_worker(self, name: str, *extra: str, wait: bool = True) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "fuseforks", "worker", "--db", self.pg_url,
                   "--nats", self.nats_url, "--mcp-config", str(self.root / "mcp.json"),
                   "--concurrency", str(self.concurrency), "--name", name, *extra]
        for wire in WIRES:
            command += ["--base-url", f"{wire}={self.base_url}{WIRE_PREFIXES[wire]}"]
        log = open(self.root / f"{name}.err", "w")  # noqa: SIM115 - owned by the process
        process = processes.spawn(command, stdout=subprocess.DEVNULL, stderr=log, text=True,
                                   env={**os.environ, **KEYS, "PYTHONUNBUFFERED": "1"})
        self.workers[name] = process
        if wait:
            self.wait_for(lambda: "ready" in self.stderr(name), 60, f"worker {name} to start")
        return process

    def start_workers(self, *names: str) -> None:
        """Start workers side by side, each ready when this returns (which of them relays is
        whichever took the lease first)."""
        for name in names:
            self.start_worker(name, wait=False)
        for name in names:
            self.wait_for(lambda n=name: "ready" in self.stderr(n), 60, f"worker {name} to start")

    def relaying(self) -> list[str]:
        """The workers that have said they relay the store's events, in the order named."""
        return [name for name in self.workers if RELAYING in self.stderr(name)]

    def shots(self) -> int:
        """Frames the shutter camera has taken, on every worker."""
        count = self.root / "shutter.count"
        return len(count.read_text().splitlines()) if count.exists() else 0

    def open_shutter(self) -> None:
        (self.root / "shutter.gate").touch()

    def stderr(self, name: str) -> str:
        return (self.root / f"{name}.err").read_text()

    def kill(self, name: str, signum: int = signal.SIGKILL) -> None:
        self.workers[name].send_signal(signum)

    def start_follower(self, *extra: str, name: str = "follow") -> None:
        out = open(self.root / f"{name}.out", "w")  # noqa: SIM115 - owned by the process
        err = open(self.root / f"{name}.err", "w")  # noqa: SIM115 - owned by the process
        self.follower = processes.spawn(
            [sys.executable, "-m", "fuseforks", "log", "--follow", "--nats", self.nats_url,
             *extra], stdout=out, stderr=err, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.wait_for(lambda: "following" in (self.root / f"{name}.err").read_text(), 60,
                      "log --follow to subscribe")

    def followed(self, name: str = "follow") -> list[str]:
        return (self.root / f"{name}.out").read_text().splitlines()

    def submit(self, requests: list[WorkRequest]) -> None:
        async def put() -> None:
            connection = await connect(self.nats_url)
            try:
                js = connection.jetstream()
                await ensure_streams(js)
                for request in requests:
                    await submit(js, request)
            finally:
                await connection.close()

        anyio.run(put)

    def turns(self) -> dict[str, list[Envelope]]:
        with PostgresStore(self.pg_url) as store:
            return {info.turn_id: store.read(info.turn_id) for info in store.turns()}

    def counts(self) -> tuple[int, int]:
        """(turns begun — started, or recorded as not started — and turns ended) in the store, in
        one cheap query; (-1, -1) while the database is away."""
        try:
            with psycopg.connect(self.pg_url, connect_timeout=2) as connection:
                row = connection.execute(
                    "SELECT count(*) FILTER (WHERE kind IN ('TurnStarted', 'TurnNotStarted')), "
                    "count(*) FILTER (WHERE kind = 'TurnEnded') FROM events").fetchone()
        except psycopg.Error:
            return -1, -1
        assert row is not None
        return int(row[0]), int(row[1])

    def received(self) -> list[bytes]:
        if not self.record_dir.exists():
            return []
        return [p.read_bytes() for p in sorted(self.record_dir.iterdir())]

    @staticmethod
    def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.2)
