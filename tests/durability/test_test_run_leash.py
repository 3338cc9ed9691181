"""A test run stopped part-way leaves nothing behind.

`make test` killed by a timeout once left its embedded PostgreSQL running for hours. Every
process the tests start is leashed to the test process (`tests/helpers/processes.py`): here a
pytest of its own starts PostgreSQL, NATS, the simulator, an MCP server over HTTP and a worker
with its camera, is SIGKILLed, and every process of its tree must be gone; the next run that
starts a server removes the dead run's scratch folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.durability.test_no_orphans import alive, descendants
from tests.helpers import processes

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "tests" / "durability" / "probes" / "servers_left_running.py"


def test_the_test_run_leaves_nothing_behind(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    env = {k: v for k, v in os.environ.items()
           if k not in ("FUSEFORKS_TEST_POSTGRES", "FUSEFORKS_TEST_NATS")}
    run = processes.spawn(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-s", str(PROBE)],
        cwd=REPO, env=env | {"PROBE_READY": str(ready)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert run.stderr is not None
        line = run.stderr.readline()
        while line and "everything is up" not in line:
            line = run.stderr.readline()
        assert ready.exists(), f"the probe run ended early ({run.wait()})"
        tree = descendants(run.pid)
        kinds = {kind: [pid for pid, command in tree.items() if kind in command]
                 for kind in ("bin/postgres -D", "postgres: ", "bin/nats-server",
                              "-m fuseforks simulator", "content.py --http",
                              "-m fuseforks worker", "-m fuseforks.demo.camera")}
        assert all(kinds.values()), "\n".join(tree.values())
        scratch = list(Path(tempfile.gettempdir()).glob(f"ffpg-{run.pid}-*"))
        assert len(scratch) == 1, scratch
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
    deadline = time.monotonic() + 60  # a last resort, not a speed check
    while left := {pid: command for pid, command in tree.items() if alive(pid)}:
        assert time.monotonic() < deadline, f"outlived the test run: {left}"
        time.sleep(0.05)
    processes.scratch_folder("ffpg").rmdir()  # sweeps the folders of runs that are gone
    assert not scratch[0].exists()
