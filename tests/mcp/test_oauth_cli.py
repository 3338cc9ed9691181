"""`fuseforks mcp login` and `logout`, and the commands that then use the login (`mcp call`,
`mcp tools`, `run`), as a person types them: real processes against the OAuth-protected server
of `tests/mcp/servers/oauth_server.py`, with the token folder of the test (`FUSEFORKS_TOKENS`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from fuseforks.mcp.tokens import TOKENS_VARIABLE
from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes
from tests.helpers.oauth import OAuthServer, arrive, consent, oauth_server
from tests.helpers.simulator import simulator as simulated

PY = sys.executable


@pytest.fixture(scope="module")
def remote() -> Iterator[OAuthServer]:
    with oauth_server() as server:
        yield server


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, TOKENS_VARIABLE: str(tmp_path / "tokens")}


def fuseforks(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return processes.run([PY, "-m", "fuseforks", *args], capture_output=True, text=True,
                         timeout=180, env=env)


class Login:
    """`fuseforks mcp login` running: the address it printed, its input, its end."""

    def __init__(self, config: Path, env: dict[str, str]) -> None:
        self.process = processes.spawn(
            [PY, "-m", "fuseforks", "mcp", "login", "--config", str(config), "design",
             "--no-browser", "--timeout", "120"],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        assert self.process.stderr is not None
        self.said: list[str] = []
        for line in self.process.stderr:
            self.said.append(line)
            if line.startswith("  http"):
                self.address = line.strip()
                break
        else:
            raise AssertionError(f"no address printed: {self.said}")

    def paste(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def end(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=120)
        return self.process.returncode, out, "".join(self.said) + err


def test_login_prints_the_address_and_takes_the_redirect_on_a_loopback_port(
        remote: OAuthServer, tmp_path: Path, environ: dict[str, str]) -> None:
    config = remote.config(tmp_path)
    tools = fuseforks("mcp", "tools", "--config", str(config), env=environ)
    assert (tools.returncode, tools.stderr) == (1, f"fault: server 'design' needs a login: "
                                                   f"fuseforks mcp login --config {config} design\n")

    login = Login(config, environ)
    assert login.address.startswith(f"{remote.issuer}/authorize?")
    loopback = parse_qs(urlsplit(login.address).query)["redirect_uri"][0]
    assert urlsplit(loopback).hostname == "127.0.0.1"
    page = arrive(consent(login.address))  # the browser comes back to the loopback port
    code, out, err = login.end()
    assert code == 0, err
    assert "fuseforks is logged in" in page.text
    kept = next((tmp_path / "tokens").iterdir())
    assert out == f"logged in to 'design' (scope: images): 4 tools; the login is kept in {kept}\n"

    called = fuseforks("mcp", "call", "--config", str(config), "design__snapshot", env=environ)
    assert called.returncode == 0, called.stderr
    assert called.stdout.startswith("the design board\nimage 1: JPEG 320x240 ")

    out_again = fuseforks("mcp", "logout", "--config", str(config), "design", env=environ)
    assert out_again.stdout == ("logged out of server 'design': the kept login is deleted; its "
                                "revocation: revoked\n")
    assert list((tmp_path / "tokens").iterdir()) == []
    for text in (out, err, called.stdout, called.stderr, out_again.stdout):
        assert not any(secret in text for secret in remote.secrets())


@pytest.mark.parametrize("pasted", ["address", "code"])
def test_on_a_machine_without_a_browser_the_address_or_the_code_is_pasted(
        remote: OAuthServer, tmp_path: Path, environ: dict[str, str], pasted: str) -> None:
    config = remote.config(tmp_path)
    login = Login(config, environ)
    redirected = consent(login.address)  # in a browser on another machine: never arrives here
    login.paste(redirected if pasted == "address" else parse_qs(
        urlsplit(redirected).query)["code"][0])
    code, out, err = login.end()
    assert code == 0, err
    assert out.startswith("logged in to 'design' (scope: images): 4 tools")


def test_a_login_that_is_not_completed_ends_in_one_line(
        remote: OAuthServer, tmp_path: Path, environ: dict[str, str]) -> None:
    done = fuseforks("mcp", "login", "--config", str(remote.config(tmp_path)), "design",
                     "--no-browser", "--timeout", "2", env=environ)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "Error: the login was not completed within 2 s"
    assert "Traceback" not in done.stderr


def test_run_names_the_login_a_remote_server_needs_and_uses_it_once_made(
        remote: OAuthServer, tmp_path: Path, environ: dict[str, str]) -> None:
    config = remote.config(tmp_path)
    with simulated("--call", "design__snapshot") as url:
        def run() -> subprocess.CompletedProcess[str]:
            return fuseforks("run", "--wire", "anthropic", "--model", "claude-sonnet-5-5",
                             "--base-url", f"{url}/anthropic", "--mcp-config", str(config),
                             "--db", str(tmp_path / "run.db"), "--log", str(tmp_path / "run.log"),
                             "--agent", "designer", "Look at the board.", env=environ)

        refused = run()
        login = Login(config, environ)
        arrive(consent(login.address))
        assert login.end()[0] == 0
        answered = run()
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        f"Error: not sent: server 'design' needs a login: fuseforks mcp login --config {config} "
        "design (--allow-missing-servers sends turns without the tools of a server that did not "
        "start)")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.splitlines()[0] == (
        "tool: agent=designer round=1 name=design__snapshot ok=true body_chars=16 images=1")
    with SqliteStore(tmp_path / "run.db") as store:
        assert len(store.turns()) == 2  # the turn not sent is recorded too, with why
    secrets = remote.secrets()
    for path in (tmp_path / "run.db", tmp_path / "run.log"):
        assert not any(secret.encode() in path.read_bytes() for secret in secrets), path


def test_login_refuses_a_server_that_has_nothing_to_log_in_to(
        tmp_path: Path, environ: dict[str, str]) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"cam": {"command": PY}}}))
    done = fuseforks("mcp", "login", "--config", str(config), "cam", env=environ)
    assert (done.returncode, done.stderr) == (1, "Error: server 'cam' is started as a command, "
                                                 "not reached over HTTP: it has nothing to log "
                                                 "in to\n")


def test_a_server_is_named_by_its_file_and_name_or_by_its_url(environ: dict[str, str]) -> None:
    far = "http://127.0.0.1:9/mcp"
    done = fuseforks("mcp", "logout", "--url", far, env=environ)
    assert (done.returncode, done.stdout) == (0, "no login to server '127.0.0.1:9' is kept\n")
    both = fuseforks("mcp", "login", "--url", far, "design", env=environ)
    assert both.returncode == 2
    assert "give either --url URL or --config FILE SERVER" in both.stderr
