"""`fuseforks demo` killed by SIGTERM or SIGKILL leaves no process behind.

The demo starts two kinds of child: the provider simulator (a process of its own) and the demo
camera (a stdio MCP server). Both are bound to the parent's life, so neither outlives it, however
it ends; SIGKILL gives the parent no chance to clean up, which is the case that matters.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import processes


def descendants(root: int) -> dict[int, str]:
    """pid -> command line of every process below `root`."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                try:
                    found[child] = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(
                        b"\0", b" ").decode()
                except OSError:
                    continue
                frontier.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("name", ["SIGTERM", "SIGKILL"])
def test_killing_the_demo_kills_its_children(tmp_path: Path, name: str) -> None:
    demo = processes.spawn(
        [sys.executable, "-m", "fuseforks", "demo", "--db", str(tmp_path / "d.db"),
         "--log", str(tmp_path / "d.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    deadline = time.monotonic() + 60
    children: dict[int, str] = {}
    while not (any("fuseforks simulator" in c for c in children.values())
               and any("fuseforks.demo.camera" in c for c in children.values())):
        assert demo.poll() is None, "the demo ended before both children were up"
        assert time.monotonic() < deadline, children
        time.sleep(0.05)
        children |= descendants(demo.pid)
    demo.send_signal(getattr(signal, name))
    assert demo.wait(timeout=20) == {"SIGTERM": 143, "SIGKILL": -signal.SIGKILL}[name]
    deadline = time.monotonic() + 10
    while left := {pid: c for pid, c in children.items() if alive(pid)}:
        assert time.monotonic() < deadline, f"outlived the demo: {left}"
        time.sleep(0.05)


CHILD = """
import pathlib, signal, sys, time
def quit(signum, frame):
    pathlib.Path(sys.argv[1]).write_text(signal.Signals(signum).name)
    sys.exit(0)
signal.signal(signal.SIGQUIT, quit)
print("ready", flush=True)
time.sleep(600)
"""

PARENT = """
import subprocess, sys
from fuseforks.core.leash import leashed
child = subprocess.Popen(leashed([sys.executable, "-c", sys.argv[1], sys.argv[2]], signal=3),
                         stdout=subprocess.PIPE, text=True)
assert child.stdout.readline() == "ready\\n"
print(child.pid, flush=True)
sys.stdin.readline()
"""


def test_a_child_is_sent_the_signal_it_was_leashed_with(tmp_path: Path) -> None:
    """A server that cleans up on a signal of its own (PostgreSQL on SIGQUIT) gets that signal,
    not SIGKILL, when the process that started it is killed."""
    said = tmp_path / "said"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, str(said)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait(timeout=60)
    deadline = time.monotonic() + 60  # a last resort, not a speed check
    while alive(child):
        assert time.monotonic() < deadline, "the child outlived its parent"
        time.sleep(0.05)
    assert said.read_text() == "SIGQUIT"
