"""A remote MCP server behind OAuth for the tests (`tests/mcp/servers/oauth_server.py`, a real
process on two ports of 127.0.0.1), and a person's browser: it follows the authorization address
with httpx, says yes on the consent page, and brings the redirect to the login's loopback port.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.helpers import processes

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "mcp" / "servers" / "oauth_server.py"


class OAuthServer:
    """The running pair: `url` is the MCP endpoint, `issuer` the authorization server."""

    def __init__(self, process: subprocess.Popen[bytes], as_port: int, rs_port: int) -> None:
        self.process = process
        self.issuer = f"http://127.0.0.1:{as_port}"
        self.url = f"http://127.0.0.1:{rs_port}/mcp"

    def state(self) -> dict[str, Any]:
        """Every token, code and client secret issued, each grant, each request seen."""
        return httpx.get(f"{self.issuer}/admin/state", timeout=30).json()

    def expire(self) -> None:
        httpx.post(f"{self.issuer}/admin/expire", timeout=30).raise_for_status()

    def revoke(self) -> None:
        httpx.post(f"{self.issuer}/admin/revoke", timeout=30).raise_for_status()

    def secrets(self) -> list[str]:
        """Every value the server issued that must never be written anywhere by fuseforks."""
        state = self.state()
        return [*state["access"], *state["refresh"], *state["code"], *state["client_secret"]]

    def config(self, folder: Path, **entry: Any) -> Path:
        """An `mcpServers` file naming this server `design`."""
        path = folder / "mcp.json"
        path.write_text(json.dumps({"mcpServers": {"design": {"url": self.url, **entry}}}))
        return path


@contextmanager
def oauth_server(*options: str) -> Iterator[OAuthServer]:
    """`oauth_server.py` with `options` (`--json`, `--open`, `--token-seconds S`)."""
    from tests.helpers.ports import free_port
    from tests.mcp.conftest import wait_listening

    as_port, rs_port = free_port(), free_port()
    process = processes.spawn(
        [sys.executable, str(SERVER), "--as-port", str(as_port), "--rs-port", str(rs_port),
         *options],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(process, as_port, 30, "authorization server")
        wait_listening(process, rs_port, 30, "MCP server")
        yield OAuthServer(process, as_port, rs_port)
    finally:
        processes.stop(process)


def consent(authorization_url: str, *, allow: bool = True) -> str:
    """What a person's browser does with the authorization address: the authorization server
    shows its consent page, the person allows; returns the address it redirects to (the
    login's loopback address with the code)."""
    with httpx.Client(timeout=30) as browser:
        shown = browser.get(authorization_url)
        assert shown.status_code == 302, shown.text
        page = shown.headers["location"]
        if not page.startswith(authorization_url.split("/authorize")[0] + "/consent"):
            return page  # the authorization server answered at once (an error for the client)
        ticket = parse_qs(urlsplit(page).query)["ticket"][0]
        assert "Allow access" in browser.get(page).text
        if not allow:
            redirect = parse_qs(urlsplit(authorization_url).query)["redirect_uri"][0]
            state = parse_qs(urlsplit(authorization_url).query)["state"][0]
            return f"{redirect}?error=access_denied&state={state}"
        answered = browser.post(page.split("?")[0], data={"ticket": ticket, "decision": "allow"})
        assert answered.status_code == 302, answered.text
        return answered.headers["location"]


def arrive(location: str) -> httpx.Response:
    """The browser following the redirect to the loopback address."""
    return httpx.get(location, timeout=30)


class Browser:
    """A person at a login (`fuseforks.mcp.login.login`'s `on_url`): each authorization
    address it is shown is consented to (or refused) and followed to the loopback address, in
    a thread of its own, as a browser would, while the login waits."""

    def __init__(self, *, allow: bool = True) -> None:
        self.allow = allow
        self.shown: list[str] = []

    def __call__(self, url: str) -> None:
        self.shown.append(url)
        threading.Thread(target=lambda: arrive(consent(url, allow=self.allow)),
                         daemon=True).start()

    def asked(self, name: str) -> str:
        """A parameter of the last authorization address (`scope`, `resource`, ...)."""
        return parse_qs(urlsplit(self.shown[-1]).query)[name][0]


async def log_in(server: Any, files: Any, *, allow: bool = True) -> tuple[Any, Browser]:
    """A login to `server` (an `HttpServer`) kept in `files`, with a browser that says yes."""
    from fuseforks.mcp.login import login

    browser = Browser(allow=allow)
    report = await login(server, files=files, on_url=browser, open_browser=False, paste=False,
                         seconds=120)
    return report, browser
