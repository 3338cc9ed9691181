"""One worker, one submitted turn, followed with `submit --wait`: the shortest path end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.workers.harness import Cluster


def test_a_submitted_turn_runs_on_a_worker_and_submit_wait_prints_it(
        pg_url: str, nats: object, tmp_path: Path) -> None:
    with Cluster(pg_url, nats.url, tmp_path) as cluster:  # type: ignore[attr-defined]
        cluster.start_worker("w1")
        done = subprocess.run(
            [sys.executable, "-m", "fuseforks", "submit", "--nats", nats.url,  # type: ignore[attr-defined]
             "--wire", "anthropic", "--model", "claude-sonnet-5-5", "--agent", "smoke",
             "--wait", "Look at the camera."],
            capture_output=True, text=True, timeout=60, env=os.environ)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        turn_id = lines[0]
        assert turn_id.startswith("turn-")
        assert lines[1:] == [
            "tool: agent=smoke round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
            "turn: agent=smoke backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=-",
            lines[-1],
        ]
        assert lines[-1].startswith("I see 1 image.")
        (events,) = cluster.turns().values()
        assert events[-1].event.answer == lines[-1]
