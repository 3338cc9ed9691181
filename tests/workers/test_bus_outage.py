"""NATS away, as a user meets it: a command started while nothing listens says so at once, in one
line, naming the refusal; `log --follow` running across an outage says once that it lost the bus
and once that it is back, then prints what is published after."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.events.codec import encode_envelope
from fuseforks.jetstream.streams import MSG_ID, connect, ensure_streams, turn_subject
from fuseforks.projections.log import short_turn_id, turn_log
from fuseforks.stores.jsonl import read_stream
from tests.cli.crafted import REPLAYS
from tests.helpers import processes
from tests.workers.harness import Cluster
from tests.workers.nats_server import NatsServer

SUBMIT = ["submit", "--wire", "anthropic", "--model", "claude-sonnet-5-5", "Look."]


def test_submit_to_a_stopped_nats_names_the_refusal_at_once(own_nats: NatsServer) -> None:
    own_nats.stop()  # nobody listens on its port now
    began = time.monotonic()
    done = processes.run([sys.executable, "-m", "fuseforks", *SUBMIT, "--nats", own_nats.url],
                         capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    elapsed = time.monotonic() - began
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"Error: cannot reach NATS at {own_nats.url}: connection refused"]
    assert elapsed < 2, f"{elapsed:.2f} s"


def test_log_follow_without_nats_names_the_refusal_at_once(own_nats: NatsServer) -> None:
    own_nats.stop()
    began = time.monotonic()
    result = CliRunner().invoke(main, ["log", "--follow", "--nats", own_nats.url])
    elapsed = time.monotonic() - began
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"Error: cannot reach NATS at {own_nats.url}: connection refused"]
    assert elapsed < 2, f"{elapsed:.2f} s"


def test_an_unknown_host_is_said_at_once_too() -> None:
    """The resolver's own words follow; what matters is that it is an answer, not a wait."""
    url = "nats://no-such-host.invalid:4222"
    result = CliRunner().invoke(main, [*SUBMIT, "--nats", url])
    assert (result.exit_code, result.stdout) == (1, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"Error: cannot reach NATS at {url}: "), line
    assert "no answer" not in line


def test_a_worker_without_nats_names_the_refusal_at_once(pg_url: str, own_nats: NatsServer,
                                                        tmp_path: Path) -> None:
    own_nats.stop()
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    began = time.monotonic()
    done = processes.run([sys.executable, "-m", "fuseforks", "worker", "--db", pg_url, "--nats",
                          own_nats.url, "--mcp-config", str(tmp_path / "mcp.json")],
                         capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - began
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"Error: cannot reach NATS at {own_nats.url}: connection refused"]
    assert elapsed < 4, f"{elapsed:.2f} s"  # the store is opened first; no 5 s of waiting


def publish_turn(url: str, name: str) -> list[str]:
    """Publish a recorded turn's events as the relay does; the lines a follower prints for it."""
    envelopes = read_stream(REPLAYS / f"{name}.jsonl")

    async def put() -> None:
        connection = await connect(url)
        try:
            js = connection.jetstream()
            await ensure_streams(js)
            for envelope in envelopes:
                await js.publish(turn_subject(envelope.turn_id), encode_envelope(envelope),
                                 headers={MSG_ID: f"{envelope.turn_id}:{envelope.seq}"})
        finally:
            await connection.close()

    anyio.run(put)
    return [f"{short_turn_id(envelopes[0].turn_id)} {line}" for line in turn_log(envelopes)]


def test_a_follower_says_once_it_lost_the_bus_and_once_it_is_back(own_nats: NatsServer,
                                                                  tmp_path: Path) -> None:
    out, err = tmp_path / "follow.out", tmp_path / "follow.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        follower = processes.spawn(
            [sys.executable, "-m", "fuseforks", "log", "--follow", "--nats", own_nats.url],
            stdout=stdout, stderr=stderr, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        said = lambda: err.read_text().splitlines()  # noqa: E731
        following = f"following every worker's turns at {own_nats.url}"
        lost = f"lost the bus at {own_nats.url}; trying again until it is back"
        back = f"back on the bus at {own_nats.url}; following again"
        Cluster.wait_for(lambda: said() == [following], 60, "log --follow to subscribe")
        before = publish_turn(own_nats.url, "p4-anthropic")
        Cluster.wait_for(lambda: out.read_text().splitlines() == before, 60, "the first lines")

        own_nats.stop()
        Cluster.wait_for(lambda: said() == [following, lost], 30, "the line saying it is lost")
        time.sleep(3)  # several tries go by: not one line each
        assert said() == [following, lost]
        own_nats.start()  # the same port and store
        Cluster.wait_for(lambda: said() == [following, lost, back], 30,
                         "the line saying it is back")
        after = publish_turn(own_nats.url, "p4-gemini")
        Cluster.wait_for(lambda: out.read_text().splitlines() == before + after, 60,
                         "the lines published after the restart")
        assert follower.poll() is None
        assert said() == [following, lost, back]
    finally:
        follower.kill()
        follower.wait(timeout=20)
