"""When the record cannot be written, the turn stops, says so in one line, and exits non-zero.

The disk fills up for real: `fuseforks run` runs under a file-size limit (RLIMIT_FSIZE), so the
store's write-ahead log cannot grow past it and SQLite's append fails part-way through a turn of
six camera rounds. What was committed before stays whole and readable, nothing claims success,
and the turn verifies as the cut turn it is.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.events.types import RequestSent, ToolResultRecorded, TurnEnded, TurnStarted
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes

LIMIT = 224 * 1024  # bytes any one file of the run may reach: a few rounds of this turn


def test_a_full_disk_stops_the_turn_with_one_line_and_keeps_what_was_recorded(
        tmp_path: Path) -> None:
    simulator = processes.spawn(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", "--rounds", "6",
         "--any-model", "--call", "nik__live_view_image"], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)
    assert simulator.stdout is not None
    url = simulator.stdout.readline().strip().removeprefix("simulator: listening on ")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    db = tmp_path / "full.db"

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    try:
        done = processes.run(
            [sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model", "m",
             "--base-url", f"{url}/anthropic", "--mcp-config", str(config), "--db", str(db),
             "--log", str(tmp_path / "full.log"), "Take six pictures."],
            capture_output=True, text=True, timeout=120, preexec_fn=small_disk,
            env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
            | {"ANTHROPIC_API_KEY": "sk-full-disk"})
    finally:
        simulator.terminate()
        simulator.wait(timeout=10)
        simulator.stdout.close()

    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"Error: the turn stopped: the record could not be written (event "
                           f"store: {db}: append failed: ")  # then sqlite3's reason
    assert last.endswith("); what was recorded before is kept")
    assert "I see" not in done.stdout  # no answer is printed for a turn that is not recorded

    with SqliteStore(db) as store:
        (turn,) = store.turns()
        events = [e.event for e in store.read(turn.turn_id)]
    assert isinstance(events[0], TurnStarted)
    assert not any(isinstance(e, TurnEnded) for e in events)
    assert sum(isinstance(e, ToolResultRecorded) for e in events) >= 1  # a whole round kept
    assert 1 < sum(isinstance(e, RequestSent) for e in events) < 7  # stopped part-way
    runner = CliRunner()
    verify = runner.invoke(main, ["replay", str(db), "--verify"])
    assert verify.exit_code == 0, verify.output
    log = runner.invoke(main, ["log", str(db)])
    assert log.output.splitlines()[-1].startswith("turn cut: agent=agent backend=anthropic ")


def test_a_store_that_cannot_be_created_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    def no_room() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    db = tmp_path / "new.db"
    done = processes.run(
        [sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model", "m",
         "--base-url", "http://127.0.0.1:9", "--db", str(db), "--log", str(tmp_path / "x.log"),
         "hi"], capture_output=True, text=True, timeout=120, preexec_fn=no_room,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    assert (done.returncode, done.stdout) == (1, "")
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: {db}: create the store failed: ")  # then sqlite3's reason
    assert line != f"Error: {db}: create the store failed: "
