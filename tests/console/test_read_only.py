"""An auditor with read access only can run the console: it reads a store they cannot write,
in a folder they cannot write, and leaves every file as it was.

As in `tests/cli/test_read_only_store.py`, the auditor is a child process that drops to `nobody`
after a warm-up as root (this interpreter lives where `nobody` cannot read, so every module must
be imported before): the warm-up serves a copy of the store and visits every page once.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from fuseforks.demo.scenarios import DEMO_SCENARIOS
from tests.cli.test_read_only_store import NOBODY, lock_up, state
from tests.console.servers import SERVING, environment
from tests.helpers import processes

PAGES = ["/", "/turns/turn-", "/audit?digest=0520", "/audit?model=grok-4.7", "/capabilities",
         "/static/console.css", "/static/live.js", "/static/icon.svg", "/turns/nope",
         "/audit?since=soon"]

AUDITOR = """
import os, signal, sys, threading, urllib.error, urllib.request
from fuseforks.cli import main
from fuseforks.console.server import serve
from fuseforks.console.source import RecordSource
from fuseforks.edge.serving import bind

warm, store, pages = sys.argv[1], sys.argv[2], sys.argv[3:]

def visit(line):
    url = line.rsplit(" on ", 1)[1].rstrip("/")
    def run():
        for page in pages:
            try:
                urllib.request.urlopen(url + page).read()
            except urllib.error.HTTPError as error:
                error.read()
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=run).start()

with bind("127.0.0.1", 0) as sock:
    serve(RecordSource(__import__("pathlib").Path(warm)), sock, token=None, announce=visit)
os.setgid(NOBODY)
os.setuid(NOBODY)
try:
    open(store, "r+b")
    sys.exit("the auditor can write the store: the test would prove nothing")
except PermissionError:
    pass
main(["console", store, "--port", "0"])
""".replace("NOBODY", str(NOBODY))


def test_an_auditor_serves_a_store_they_cannot_write(demo_store: Path, shared: Path) -> None:
    folder, warm = shared / "audit", shared / "warm"
    folder.mkdir()
    warm.mkdir()
    store = folder / "fuseforks.db"
    shutil.copy(demo_store, store)
    shutil.copy(demo_store, warm / "fuseforks.db")
    lock_up(folder, store)
    before = state(folder)
    auditor = processes.spawn(
        [sys.executable, "-c", AUDITOR, str(warm / "fuseforks.db"), str(store), *PAGES],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=environment())
    try:
        assert auditor.stdout is not None
        line = auditor.stdout.readline()
        assert line.startswith(f"{SERVING}{store} on "), (line, auditor.stderr.read())
        url = line.strip().rsplit(" on ", 1)[1].rstrip("/")
        statuses = {page: httpx.get(url + page).status_code for page in PAGES}
        assert statuses == dict.fromkeys(PAGES[:8], 200) | {"/turns/nope": 404,
                                                                  "/audit?since=soon": 400}
        listing = httpx.get(url + "/").text
        assert listing.count('<tr data-turn="') == len(DEMO_SCENARIOS)
    finally:
        auditor.send_signal(signal.SIGTERM)
        out, errors = auditor.communicate(timeout=60)
    assert (auditor.returncode, out, errors) == (0, "console: stopped\n", "")
    assert state(folder) == before
