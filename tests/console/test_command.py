"""`fuseforks console` as a command: it stops cleanly on a signal, and a source it cannot read,
or a port it cannot have, is one line and an exit code — before anything is served."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import sqlite3
import subprocess
import sys
from html import escape, unescape
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from fuseforks.edge.serving import bind
from fuseforks.events.codec import Envelope
from fuseforks.events.types import EVENT_TYPES, RoundStarted
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import camera_turn, digest, write_jsonl
from tests.console.servers import environment, serving, start, stop
from tests.events.samples import SAMPLES
from tests.helpers import processes


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_console_cleanly(demo_store: Path, signum: int) -> None:
    console, url = start(str(demo_store))
    with httpx.Client(base_url=url) as client:  # a browser's connection, kept open
        assert client.get("/").status_code == 200
        code, out, errors = stop(console, signum)
    assert (code, out, errors) == (0, "console: stopped\n", "")
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


def run(*args: str, cwd: Path) -> tuple[int, str, list[str]]:
    done = processes.run([sys.executable, "-m", "fuseforks", "console", *args], cwd=cwd,
                         capture_output=True, text=True, timeout=120, env=environment(),
                         stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr.splitlines()


def test_without_a_source_it_reads_the_demos_store_and_says_when_there_is_none(
        tmp_path: Path) -> None:
    code, out, [line] = run(cwd=tmp_path)
    assert (code, out) == (2, "")
    assert line.startswith("Error: ") and line.endswith(" Try 'fuseforks console --help'.")
    assert "'fuseforks.db'" in line  # the store it looked for; the rest is click's words
    SqliteStore(tmp_path / "fuseforks.db").close()
    console = processes.spawn(
        [sys.executable, "-m", "fuseforks", "console", "--port", "0"], cwd=tmp_path,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=environment())
    assert console.stdout is not None
    line = console.stdout.readline()
    assert line.startswith("console: serving fuseforks.db on http://127.0.0.1:"), line
    assert stop(console) == (0, "console: stopped\n", "")


def test_a_damaged_store_is_one_line(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    assert run(str(damaged), cwd=tmp_path) == (1, "", [
        f"Error: {damaged}: not a readable SQLite database (file is not a database); nothing "
        "was changed"])


def test_a_store_without_events_table_is_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    connection.close()
    assert run(str(other), cwd=tmp_path) == (1, "", [
        f"Error: {other}: an SQLite database, but not a fuseforks store (it has tables "
        "['invoices'] and no fuseforks_meta); nothing was changed"])


def test_a_port_in_use_is_one_line(demo_store: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        number = taken.getsockname()[1]
        assert run(str(demo_store), "--port", str(number), cwd=tmp_path) == (1, "", [
            f"Error: console: Address already in use (127.0.0.1:{number})"])


def test_a_turn_whose_id_has_any_characters_is_linked_to_its_page(tmp_path: Path) -> None:
    odd = "cam/7 #2?x=1&y"
    stream = write_jsonl(tmp_path / "odd.jsonl", camera_turn(odd, [digest(1)]))
    with serving(stream) as url:
        listing = httpx.get(url)
        link = f'href="/turns/{quote(odd, safe="")}"'.replace("&", "&amp;")
        assert link in listing.text
        page = httpx.get(f"{url}turns/{quote(odd, safe='')}")
        assert page.status_code == 200
        assert f'<span class="id">{escape(odd)}</span>' in page.text
        found = httpx.get(f"{url}turns/cam%2F7", follow_redirects=False)
        assert (found.status_code, found.headers["location"]) == (
            302, f"/turns/{quote(odd, safe='')}")


def test_the_consoles_connections_do_not_hold_small_writes_back() -> None:
    """Nagle's algorithm off (TCP_NODELAY) on every accepted connection: with it on, each
    response after the first on a kept-alive connection waited for the client's delayed
    acknowledgement between its head and its body."""

    async def accepted() -> list[int]:
        seen: list[int] = []

        class Note(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                connection = transport.get_extra_info("socket")
                seen.append(connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        with bind("127.0.0.1", 0) as sock:
            server = await asyncio.get_running_loop().create_server(Note, sock=sock)
            reader, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            await reader.read()
            writer.close()
            server.close()
        return seen

    assert asyncio.run(accepted()) == [1]


def test_every_event_kind_has_its_place_on_a_turns_page(tmp_path: Path) -> None:
    """One event of every kind, fully populated, in one turn read from a JSON Lines stream: each
    is shown by what it records, none by the fallback that only names the kind."""
    envelopes = [Envelope(turn_id="every-kind", seq=seq, at=f"2026-11-30T08:00:{seq:02d}.000Z",
                          event=event) for seq, event in enumerate(SAMPLES, start=1)]
    stream = write_jsonl(tmp_path / "every.jsonl", envelopes)
    with serving(stream) as url:
        page = httpx.get(f"{url}turns/every-kind")
    assert page.status_code == 200
    shown = re.findall(r'<li class="event (\w+)" id="seq-(\d+)" data-kind="\1">', page.text)
    assert [kind for kind, _ in shown] == [
        type(event).__name__ for event in SAMPLES if not isinstance(event, RoundStarted)]
    assert {type(event).__name__ for event in SAMPLES} == {k.__name__ for k in EVENT_TYPES}
    assert re.search(r'<div class="body">\s*<p><b>\w+</b></p>', page.text) is None
    assert '<dt>taken over</dt><dd id="turn-taken-over">1</dd>' in page.text
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", page.text)))
    for said in ("Interrupted by SIGTERM while waiting on the tools.",
                 "Taken over by worker-b (api.anthropic.com) from worker-a where the record "
                 "stopped; 2 tool "
                 "images lost with the process that died; tool call c1 may or may not have run, "
                 "and was not run again.",
                 "MCP server cam 2 did not start: command not found: 'cam2'",
                 "Tools changed while the session ran: nik__live_view_image, nik__focus changed"
                 " since last offered; withheld until approved: nik__focus.",
                 "Tool images dropped from t:", "too_many (JPEG)", "fifth image",
                 "PNG → image/jpeg (re-encoded)", "1568 × 1045, scaled from 3000 × 2000",
                 "123456 (121 KB), from 999999",
                 "Retried (attempt 1): rate_limited HTTP 429, again after 1500 ms.",
                 "Resent as JPEG: m refused WebP; 2 images converted.",
                 "Capped: 1 older tool image taken off to keep 20 on the next request.",
                 "Images stripped: 2 tool images taken off the message list",
                 "Sent without images: failed.",
                 "Repeat: t gave the same result 3 times",
                 "error, 1 characters, 2 images not attached (images no longer go to this "
                 "model). server exited with code 1",
                 "Response: 1 tokens in (of which 3 read from the cache, 4 written to it), 2 out",
                 "Turn not started: agent agent_9 asked for carrier-pigeon m, which could not "
                 "run here",
                 "Gateway session started by claude-code 2.1.0 over stdio, before gateway "
                 "agent_9: profile claude-code, images at most 1568 px on the long edge and 73 KB "
                 "each, 4 a result (shrunk further to fit), at most 768 px on the short edge, "
                 "never as WebP, a tall page in parts; a whole result at most 25000 tokens; "
                 "notes in en.",
                 "Result sent to claude-code 2.1.0: call 1 of nik__live_view_image on nik, 1 "
                 "image.",
                 "Gateway session ended: closed after 1 call; c2 had no result when it ended."):
        assert said in text, said
