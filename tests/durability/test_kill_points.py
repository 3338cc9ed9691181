"""Kill `fuseforks run` at every commit point of a multi-round turn with images, three ways.

Real processes throughout: `fuseforks run` as a subprocess, the provider simulator as another
(recording every request body it receives, answering after a delay so a request is in flight
when the kill lands), and the demo camera over stdio (taking a while per frame, so a tool call is
in flight too). A reference run of each scenario gives the turn's events; the run is then killed
right after each write-ahead commit — the batch ending in a `RequestSent` (a request in flight)
and the batch ending in the round's `ToolCalled` events (a tool call in flight) — with SIGINT,
SIGTERM and SIGKILL, plus once before anything was recorded.

After each kill, whatever happened to the process:
- every request body the simulator received has a `RequestSent` in the store with the same image
  digests, and `fuseforks audit --digest D` lists that delivery (received or unanswered);
- SIGINT/SIGTERM: the turn ends with the recorded interruption, and the exit code is 130/143;
- SIGKILL: the turn shows as cut in `fuseforks log` and in the audit;
- `fuseforks replay --verify` exits 0;
- no process the run started is alive.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.events.types import (
    RequestSent,
    ToolCalled,
    TurnEnded,
    TurnEvent,
    TurnInterrupted,
)
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes
from tests.stores.parity import assert_rows_are_the_folds

LATENCY = 0.3  # seconds the simulated model takes to answer
EXPOSURE = 0.3  # seconds the camera takes per frame
KEY = "sk-kill-points-0451"


@dataclass(frozen=True)
class Scenario:
    name: str
    wire: str
    model: str
    prefix: str
    key_env: str


CAMERA = Scenario("camera", "anthropic", "claude-sonnet-5-5", "/anthropic", "ANTHROPIC_API_KEY")
REFUSING = Scenario("refusing", "perplexity-responses", "perplexity/deepseek-v4-pro-0813",
                    "/perplexity/v1", "PERPLEXITY_API_KEY")
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
EXIT = {"SIGINT": 130, "SIGTERM": 143, "SIGKILL": -signal.SIGKILL}


@pytest.fixture(scope="module")
def simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    record = tmp_path_factory.mktemp("bodies")
    process = processes.spawn(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", "--rounds", "2",
         "--call", "nik__live_view_image", "--latency", str(LATENCY),
         "--record-requests", str(record)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    first = process.stdout.readline().strip()
    assert first.startswith("simulator: listening on "), first
    yield first.removeprefix("simulator: listening on "), record
    process.terminate()
    process.wait(timeout=10)
    process.stdout.close()


@dataclass
class Run:
    case: str
    db: Path
    process: subprocess.Popen[str]
    marker: str
    stdout: str = ""
    stderr: str = ""


def start(base_url: str, scenario: Scenario, work: Path, case: str) -> Run:
    work.mkdir(parents=True)
    marker = uuid.uuid4().hex
    config = work / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable,
        "args": ["-m", "fuseforks.demo.camera", "--exposure", str(EXPOSURE)],
        "env": {"FUSEFORKS_TEST_MARKER": marker}}}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    process = processes.spawn(
        [sys.executable, "-m", "fuseforks", "run", "--wire", scenario.wire,
         "--model", scenario.model, "--base-url", base_url + scenario.prefix,
         "--mcp-config", str(config), "--db", str(work / "run.db"),
         "--log", str(work / "run.log"), "--agent", case,
         f"Take one live view and describe it. ({case})"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env | {scenario.key_env: KEY})
    return Run(case, work / "run.db", process, marker)


def last_seq(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as connection:
            row = connection.execute("SELECT max(seq) FROM events").fetchone()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return int(row[0] or 0)


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (its SigCgt mask in /proc)."""
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signum - 1) & 1)


def kill_after(run: Run, seq: int, name: str, delay: float) -> None:
    """Wait until the store holds `seq` events (or, for 0, until fuseforks handles signals: the
    interpreter's own start cannot be stopped cleanly by anyone), then `delay` seconds more: 0
    kills between the commit and the side effect, more while it runs."""
    deadline = time.monotonic() + 180  # a last resort against a hang, not a speed check
    while seq == 0 and not catches(run.process.pid, signal.SIGTERM):
        assert run.process.poll() is None, f"{run.case}: the run ended before it began"
        assert time.monotonic() < deadline, f"{run.case}: signals never handled"
        time.sleep(0.005)
    while seq and last_seq(run.db) < seq:
        assert run.process.poll() is None, f"{run.case}: the run ended before seq {seq}"
        assert time.monotonic() < deadline, f"{run.case}: seq {seq} never came"
        time.sleep(0.005)
    time.sleep(delay)
    run.process.send_signal(SIGNALS[name])
    run.stdout, run.stderr = run.process.communicate(timeout=60)


def finish(run: Run) -> None:
    run.stdout, run.stderr = run.process.communicate(timeout=120)
    assert run.process.returncode == 0, run.stderr


def marked_processes(marker: str) -> list[int]:
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                alive.append(int(entry.name))
        except OSError:
            continue
    return alive


_B64_DATA = re.compile(rb'"data":"([A-Za-z0-9+/=]{100,})"|data:image/[a-z]+;base64,([A-Za-z0-9+/=]+)')


def body_digests(body: bytes) -> list[str]:
    digests = []
    for match in _B64_DATA.finditer(body):
        payload = match.group(1) or match.group(2)
        try:
            digests.append(hashlib.sha256(base64.b64decode(payload, validate=True)).hexdigest())
        except binascii.Error:
            continue
    return digests


def bodies_of(record: Path, case: str) -> list[bytes]:
    token = f"({case})".encode()
    return [p.read_bytes() for p in sorted(record.glob("*.json")) if token in p.read_bytes()]


def stored(db: Path) -> list[TurnEvent]:
    if not db.exists():
        return []
    with SqliteStore(db) as store:
        turns = store.turns()
        assert len(turns) <= 1
        return [e.event for t in turns for e in store.read(t.turn_id)]


def commit_points(events: list[TurnEvent]) -> list[int]:
    """Seqs after which a side effect starts: each request, and each round's tool calls."""
    points = []
    for seq, (event, following) in enumerate(zip(events, [*events[1:], None], strict=True),
                                              start=1):
        if isinstance(event, RequestSent) or (isinstance(event, ToolCalled) and not isinstance(following, ToolCalled)):
            points.append(seq)
    return points


class _Serialized:
    """`CliRunner` swaps the process's stdout while a command runs, so two threads invoking
    commands at once read each other's output: the checks of the two runs in flight take
    turns."""

    _lock = threading.Lock()

    def invoke(self, command: Any, args: list[str]) -> Any:
        with self._lock:
            return CliRunner().invoke(command, args)


def check(run: Run, name: str, record: Path) -> set[str]:
    """Every invariant of a killed run; returns the kinds of the events recorded."""
    assert "Traceback" not in run.stderr, run.stderr
    assert run.process.returncode == EXIT[name], (run.case, run.process.returncode, run.stderr)
    events = stored(run.db)
    sent = [e for e in events if isinstance(e, RequestSent)]
    bodies = bodies_of(record, run.case)
    # Write-ahead: the record may hold one request more than the provider received (killed after
    # the commit, before the bytes left), never one less.
    assert len(sent) - 1 <= len(bodies) <= len(sent), (run.case, len(bodies), len(sent))
    runner = _Serialized()
    turn_id = stored_turn(run.db) if events else ""
    for body, request in zip(bodies, sent, strict=False):
        digests = body_digests(body)
        assert digests == [d.digest for d in request.images], run.case
        for digest in digests:
            audit = runner.invoke(main, ["audit", str(run.db), "--digest", digest])
            assert audit.exit_code == 0, audit.output
            rows = [line for line in audit.output.splitlines() if f" turn={turn_id}" in line]
            assert rows, audit.output
            assert all(re.search(r" (received|unanswered|refused)( stripped)? turn=", r)
                       for r in rows), rows
            if name == "SIGKILL":
                assert all(r.endswith("(turn cut: no end recorded)") for r in rows), rows
    if not events and name != "SIGKILL":  # stopped before anything was sent: said so, once
        assert run.stderr.splitlines()[-1:] in (
            [f"stopped ({name}) before the turn started: nothing was sent or recorded"],
            [f"stopped ({name}) before the command began: nothing was done"]), run.stderr
    if events:
        verify = runner.invoke(main, ["replay", str(run.db), "--verify"])
        assert verify.exit_code == 0, verify.output
        assert_rows_are_the_folds(run.db)  # the read model went with the events it came from
        last = events[-1]
        if name == "SIGKILL":
            assert not isinstance(last, TurnEnded), run.case
            log = runner.invoke(main, ["log", str(run.db)])
            assert log.output.splitlines()[-1].startswith(f"turn cut: agent={run.case} "), log.output
        else:
            interrupted, ended = events[-2:]
            assert isinstance(interrupted, TurnInterrupted) and interrupted.cause == name
            assert isinstance(ended, TurnEnded) and ended.stop == "interrupted"
            assert run.stderr.splitlines()[-1] == f"turn interrupted ({name})"
    deadline = time.monotonic() + 10
    while marked_processes(run.marker):
        assert time.monotonic() < deadline, f"{run.case}: a child outlived the run"
        time.sleep(0.05)
    return {type(e).__name__ for e in events}


def stored_turn(db: Path) -> str:
    with SqliteStore(db) as store:
        return store.turns()[0].turn_id


def test_every_kill_point_keeps_the_record_whole(simulator: tuple[str, Path],
                                                   tmp_path: Path) -> None:
    base_url, record = simulator
    references: dict[str, list[TurnEvent]] = {}
    for scenario in (CAMERA, REFUSING):
        reference = start(base_url, scenario, tmp_path / f"ref-{scenario.name}",
                          f"ref-{scenario.name}")
        finish(reference)
        references[scenario.name] = stored(reference.db)
    assert [type(e).__name__ for e in references["refusing"]].count("ImagesStripped") == 1

    # Every point twice: at once (between the commit and the side effect) and while the side
    # effect runs; the signal rotates so that each meets every kind of point.
    names = list(SIGNALS)
    points = [(scenario, point) for scenario in (CAMERA, REFUSING)
              for point in commit_points(references[scenario.name])]
    cases: list[tuple[Scenario, int, str, float]] = []
    for index, (scenario, point) in enumerate(points):
        cases.append((scenario, point, names[index % 3], 0.0))
        cases.append((scenario, point, names[(index + 1) % 3], LATENCY / 2))
    cases += [(CAMERA, 0, "SIGINT", 0.0), (CAMERA, 0, "SIGTERM", 0.0)]
    assert len(cases) >= 20

    def one(index: int) -> tuple[str, int, set[str]]:
        scenario, point, name, delay = cases[index]
        case = f"k{index:02d}-{scenario.name}-{point}-{name}"
        run = start(base_url, scenario, tmp_path / case, case)
        kill_after(run, point, name, delay)
        return name, point, check(run, name, record)

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(one, range(len(cases))))

    # Coverage: kills landed right after every kind a turn records before its end.
    kinds_before_end = {type(e).__name__ for events in references.values() for e in events} - {
        "TurnEnded", "FallbackSettled"}
    seen_in_prefixes = set().union(*(kinds for _, point, kinds in outcomes if point))
    assert kinds_before_end <= seen_in_prefixes
