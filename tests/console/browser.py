"""A real browser for the console's tests: the distribution's Chromium, driven by Playwright.

Chromium is started through `tests/helpers/processes.py`, like every process of the tests, so it
dies with the test run however that ends; Playwright connects to it over the DevTools protocol
instead of launching a browser of its own (which it would download, and which would not be bound
to the run). Chromium comes from the machine's packages (`make test` installs it when missing).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, expect, sync_playwright

from tests.helpers import processes

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")

LAST_RESORT_MS = 120_000
"""How long Playwright waits for what a test expects before it gives up: a last resort for a
busy machine, never a verdict on speed (an expectation that holds returns at once)."""
expect.set_options(timeout=LAST_RESORT_MS)


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium with a profile of its own, and Playwright connected to it."""
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: `make test` installs it (apt-get)"
    profile = Path(tempfile.mkdtemp(prefix="ffchromium-"))
    process = processes.spawn(
        [str(CHROMIUM), *FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}",
         "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said = []
        for line in process.stderr:
            said.append(line)
            if found := _LISTENING.search(line):
                endpoint = found.group(1)
                break
        else:
            raise AssertionError("Chromium ended before it listened:\n" + "".join(said))
        # Chromium keeps writing to stderr; a reader keeps the pipe from filling up.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        with sync_playwright() as playwright:
            browser = playwright.chromium.connect_over_cdp(endpoint)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)
