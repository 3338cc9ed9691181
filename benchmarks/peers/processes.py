"""The benchmark's processes, seen from the orchestrator: the simulator and one worker per
contender, each bound to the orchestrator's life (`fuseforks.core.leash`), so a run stopped by
Ctrl-C or a kill leaves nothing behind. The camera is each worker's own child, started the way its
contender starts MCP servers."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.peers.contenders import Contender, Settings
from benchmarks.peers.measure import cpu_seconds, descendants
from fuseforks.core.leash import leashed

REPO = Path(__file__).resolve().parents[2]
ANSWER_TIMEOUT = 120.0
"""Seconds a worker may take to answer one command (a burst included) before it is given up."""


class WorkerFailed(Exception):
    """The worker could not do what it was asked: its error, or that it did not answer."""


class Simulator:
    """`fuseforks simulator` on 127.0.0.1, scripted to call the camera once per turn, whichever
    prefix (if any) a contender gives the camera's tool names."""

    def __init__(self, latency: float = 0.0) -> None:
        calls = [arg for name in ("live_view_image", "cam__live_view_image", "cam_live_view_image")
                 for arg in ("--call", name)]
        command = [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", "--any-model",
                   "--latency", str(latency), *calls]  # the contenders ask for a name of their own
        self.process = subprocess.Popen(leashed(command), cwd=REPO, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        first = self.process.stdout.readline().strip()
        if not first.startswith("simulator: listening on "):
            self.close()
            raise RuntimeError(f"the simulator did not start: {first!r}")
        self.base_url = first.removeprefix("simulator: listening on ")

    def cpu(self) -> float:
        return cpu_seconds([self.process.pid])

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stdout:
            self.process.stdout.close()


class Worker:
    """A contender's process (`benchmarks.peers.worker`). `error` is set once it failed; a failed
    worker is asked nothing more."""

    def __init__(self, contender: Contender, settings: Settings) -> None:
        self.contender = contender
        self.error = ""
        command = [sys.executable, "-m", "benchmarks.peers.worker",
                   json.dumps({"contender": contender.name, **asdict(settings)})]
        self.process = subprocess.Popen(
            leashed(command), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**os.environ, **contender.env})
        self._buffer = b""
        self.infra: list[int] = []
        """The worker's children (its camera), known once it has started."""
        self.ready: dict[str, Any] = {}
        try:
            self.ready = self._answer()
            self.infra = descendants(self.process.pid)
        except WorkerFailed as failure:
            self.fail(str(failure))

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        if self.error:
            raise WorkerFailed(self.error)
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps({"op": op, **fields}).encode() + b"\n")
            self.process.stdin.flush()
            return self._answer()
        except (WorkerFailed, BrokenPipeError) as failure:
            self.fail(str(failure) or "the worker ended")
            raise WorkerFailed(self.error) from None

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerFailed(f"no answer within {ANSWER_TIMEOUT:.0f} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerFailed(f"the worker ended (exit status {self.process.wait()})")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise WorkerFailed(answer["error"])
        return answer

    def infra_cpu(self) -> float:
        return cpu_seconds(self.infra)

    def fail(self, error: str) -> None:
        self.error = self.error or error
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(b'{"op": "quit"}\n')
                self.process.stdin.close()
                self.process.wait(timeout=20)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream and not stream.closed:
                stream.close()


def time_imports(contender: Contender) -> float | str:
    """Seconds the contender's imports take in a fresh process, or why they failed."""
    done = subprocess.run([sys.executable, "-m", "benchmarks.peers.worker", "--imports",
                           contender.name], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **contender.env}, timeout=300)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["exit status " + str(done.returncode)])[-1]
        return last[:300]
    seconds: float = json.loads(done.stdout.strip().splitlines()[-1])["imports"]
    return seconds
