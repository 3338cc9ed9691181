"""The console's fixtures: the demo's store, a browser, and a console serving the store."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.cli import test_read_only_store
from tests.console import browser as chromium
from tests.console.browser import LAST_RESORT_MS
from tests.console.servers import environment, serving
from tests.helpers import processes
from tests.stores.fixtures import pg_server, pg_url

__all__ = ["pg_server", "pg_url", "shared"]


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store `fuseforks demo` writes: the seven wires, an image-refusing model, and the
    gemini-2.5 model that takes tool images only outside the tool result."""
    folder = tmp_path_factory.mktemp("demo")
    store = folder / "fuseforks.db"
    done = processes.run(
        [sys.executable, "-m", "fuseforks", "demo", "--db", str(store), "--log",
         str(folder / "fuseforks.log")],
        capture_output=True, text=True, timeout=600, env=environment())
    assert done.returncode == 0, done.stderr
    return store


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium per test module. Not per session: while Playwright's synchronous API is open
    it keeps an event loop running on the main thread, where other modules' tests start their
    own (`anyio.run`)."""
    with chromium.chromium() as opened:
        yield opened


@pytest.fixture(scope="session")
def demo_console(demo_store: Path) -> Iterator[str]:
    """The address of a console serving the demo's store."""
    with serving(demo_store) as url:
        yield url


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(LAST_RESORT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


shared = test_read_only_store.shared
"""A folder every user can reach, for a console run as `nobody`."""
