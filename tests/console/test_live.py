"""A turn appears on the open pages while `fuseforks run` writes it, without a reload.

The provider is a local OpenAI-compatible server that holds its answer until the test lets it
go: the turn is then recorded up to its request (the engine writes ahead of every call), and the
test waits on that — the request reaching the provider — never on a number of seconds.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from fuseforks.stores.sqlite import SqliteStore
from tests.console.browser import LAST_RESORT_MS
from tests.console.servers import environment, serving
from tests.helpers import processes
from tests.helpers.answers import send_json

TIMEOUT_MS = LAST_RESORT_MS
ANSWER = "Hello from a held provider."


class Gate:
    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()


@pytest.fixture
def held_provider() -> Iterator[tuple[str, Gate]]:
    gate = Gate()

    class Provider(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            gate.asked.set()
            gate.release.wait(TIMEOUT_MS / 1000)
            send_json(self, {
                "id": "held-1", "object": "chat.completion", "created": 0, "model": "local",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": ANSWER}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12},
            })

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", gate
    finally:
        gate.release.set()
        server.shutdown()
        server.server_close()


def stays(page: Page) -> None:
    """Mark the document: a reload or a navigation would lose the mark."""
    page.evaluate("window.stayed = 'yes'")


def stayed(page: Page) -> bool:
    return page.evaluate("window.stayed") == "yes"


def test_a_running_turn_appears_and_grows_on_the_open_pages(
        browser: Browser, tmp_path: Path, held_provider: tuple[str, Gate]) -> None:
    base_url, gate = held_provider
    store = tmp_path / "live.db"
    SqliteStore(store).close()
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    with serving(store) as url:
        listing = context.new_page()
        listing.goto(url)
        expect(listing.locator("p.empty")).to_contain_text("No turn recorded yet.")
        stays(listing)
        run = processes.spawn(
            [sys.executable, "-m", "fuseforks", "run", "--wire", "openai-compat", "--model",
             "local", "--base-url", base_url, "--db", str(store), "--log",
             str(tmp_path / "live.log"), "--agent", "watched", "--no-stream", "Say hello."],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=environment())
        try:
            assert gate.asked.wait(TIMEOUT_MS / 1000), "the request never reached the provider"
            row = listing.locator("tr[data-turn]")
            expect(row).to_have_count(1)
            expect(row.locator("td.stop")).to_have_text("cut")
            expect(row.locator("td").nth(1)).to_have_text("watched")
            assert stayed(listing)

            turn_id = row.get_attribute("data-turn")
            assert turn_id is not None
            turn = context.new_page()
            turn.goto(f"{url}turns/{turn_id}")
            expect(turn.locator("#turn-stop")).to_have_text("cut")
            expect(turn.locator("p.legend.open")).to_contain_text("No end recorded yet")
            expect(turn.locator("li.RequestSent")).to_have_count(1)
            expect(turn.locator("li.ResponseReceived")).to_have_count(0)
            stays(turn)

            gate.release.set()
            out, errors = run.communicate(timeout=TIMEOUT_MS / 1000)
            assert run.returncode == 0, errors
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
        expect(turn.locator("#turn-stop")).to_have_text("answered")
        expect(turn.locator("#answer")).to_have_text(ANSWER)
        expect(turn.locator("p.legend.open")).to_have_count(0)
        expect(turn.locator("#usage-output_tokens")).to_have_text("5")
        expect(turn.locator("#log-lines")).to_contain_text(
            "turn: agent=watched backend=openai-compat model=local rounds=1 stop=answered")
        expect(listing.locator("tr[data-turn] td.stop")).to_have_text("answered")
        with SqliteStore(store, read_only=True) as written:
            events = len(written.read(turn_id))
        expect(listing.locator("tr[data-turn] td").nth(8)).to_have_text(str(events))
        assert stayed(listing) and stayed(turn)
        assert ANSWER in out
    context.close()
