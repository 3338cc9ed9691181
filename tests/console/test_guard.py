"""Who may read the console: loopback only by name, a token anywhere else, GET and HEAD only.

Real processes on real sockets; every request goes to 127.0.0.1 (a console bound to all
addresses is reached through its loopback one).
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from tests.console.servers import environment, serving, start, stop
from tests.helpers import processes

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self'; connect-src 'self'; form-action 'self'; "
                               "base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


def port(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_nothing_but_get_and_head_is_answered(demo_console: str, method: str) -> None:
    for path in ("/", "/audit", "/capabilities", "/turns/x", "/static/console.css", "/nowhere"):
        response = httpx.request(method, demo_console.rstrip("/") + path, content=b"x=1")
        assert (response.status_code, response.headers["allow"]) == (405, "GET, HEAD"), path
        assert "The console only reads: it answers GET and HEAD." in response.text


def test_every_page_and_file_comes_with_headers_that_keep_it_to_itself(
        demo_console: str) -> None:
    for path in ("/", "/audit?digest=0000", "/capabilities", "/static/live.js", "/nowhere"):
        response = httpx.get(demo_console.rstrip("/") + path)
        assert {k: response.headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS, path
        assert "server" not in response.headers


def test_on_loopback_a_request_for_another_host_name_is_refused(demo_console: str) -> None:
    """DNS rebinding: a page at evil.example points its name at 127.0.0.1 and reads the
    console through the visitor's browser — with `Host: evil.example` in every request."""
    number = port(demo_console)
    for host in (f"evil.example:{number}", "evil.example", f"127.0.0.1.evil.example:{number}",
                 ""):
        response = httpx.get(demo_console, headers={"host": host})
        assert response.status_code == 403, host
        assert ("This console answers only to the addresses of this machine (127.0.0.0/8, "
                "localhost and [::1])") in response.text
    for host in (f"127.0.0.1:{number}", f"localhost:{number}", f"LOCALHOST:{number}",
                 f"[::1]:{number}", "127.0.0.1"):
        assert httpx.get(demo_console, headers={"host": host}).status_code == 200, host


def test_any_loopback_address_it_is_bound_to_serves_without_a_token(demo_store: Path) -> None:
    """127.0.0.0/8 is this machine's: a console bound to 127.0.0.2 starts without a token, as
    on 127.0.0.1, and so must answer the requests that name the address it serves on."""
    with serving(demo_store, "--host", "127.0.0.2", env=environment()) as url:
        assert url.startswith("http://127.0.0.2:")
        response = httpx.get(url)
        assert response.status_code == 200, response.text
        assert httpx.get(url, headers={"host": "evil.example"}).status_code == 403


def test_another_address_needs_a_token_and_the_command_says_so(demo_store: Path) -> None:
    result = CliRunner().invoke(main, ["console", str(demo_store), "--host", "0.0.0.0"],
                                env={"FUSEFORKS_CONSOLE_TOKEN": None})
    assert (result.exit_code, result.stdout, result.stderr.splitlines()) == (2, "", [
        "Error: serving on 0.0.0.0 lets other machines read the record: set "
        "FUSEFORKS_CONSOLE_TOKEN or give --token-file FILE (or serve on 127.0.0.1). Try "
        "'fuseforks console --help'."])


def test_a_short_or_unreadable_token_is_refused(demo_store: Path, tmp_path: Path) -> None:
    short = CliRunner().invoke(main, ["console", str(demo_store), "--host", "0.0.0.0"],
                               env={"FUSEFORKS_CONSOLE_TOKEN": "hunter2"})
    assert (short.exit_code, short.stderr.splitlines()) == (1, [
        "Error: FUSEFORKS_CONSOLE_TOKEN: the token must be at least 16 characters long"])
    missing = tmp_path / "token"
    unreadable = CliRunner().invoke(main, ["console", str(demo_store), "--token-file",
                                           str(missing)])
    assert (unreadable.exit_code, unreadable.stderr.splitlines()) == (1, [
        f"Error: {missing}: cannot read the token (No such file or directory)"])
    assert "hunter2" not in short.output


@pytest.mark.parametrize("given", ["environment", "file"])
def test_with_a_token_every_request_must_present_it(demo_store: Path, tmp_path: Path,
                                                    given: str) -> None:
    token = secrets.token_urlsafe(24)
    env = environment()
    args = [str(demo_store), "--host", "0.0.0.0"]
    if given == "file":
        (tmp_path / "token").write_text(token + "\n")
        args += ["--token-file", str(tmp_path / "token")]
    else:
        env["FUSEFORKS_CONSOLE_TOKEN"] = token
    console, url = start(*args, env=env)
    try:
        assert url.startswith("http://0.0.0.0:")
        local = f"http://127.0.0.1:{port(url)}"
        with httpx.Client(base_url=local) as client:
            for path in ("/", "/turns/x", "/audit", "/static/console.css"):
                refused = client.get(path)
                assert refused.status_code == 401, path
                assert "This console needs its token" in refused.text
            assert client.get("/", headers={"authorization": "Bearer wrong-token-0123456789"}
                              ).status_code == 401
            assert client.get("/?token=wrong-token-0123456789").status_code == 401
            assert client.get("/", headers={"authorization": f"Bearer {token}"}).status_code \
                == 200
            # Any host name: on another address the token is the guard, not the name.
            assert client.get("/", headers={"authorization": f"Bearer {token}",
                                            "host": "console.example"}).status_code == 200
            signed_in = client.get(f"/audit?model=grok-4.7&token={token}")
            assert signed_in.status_code == 303
            assert signed_in.headers["location"] == "/audit?model=grok-4.7"
            cookie = signed_in.headers["set-cookie"]
            assert cookie.endswith("; Path=/; HttpOnly; SameSite=Strict")
            assert token not in cookie
            session = cookie.split(";")[0].split("=", 1)[1]
        with httpx.Client(base_url=local, cookies={"fuseforks_console": session}) as browser:
            page = browser.get("/audit?model=grok-4.7")
            assert page.status_code == 200
            assert "grok-4.7" in page.text
            assert browser.post("/").status_code == 405
        with httpx.Client(base_url=local, cookies={"fuseforks_console": "0" * 64}) as forged:
            assert forged.get("/").status_code == 401
    finally:
        code, out, errors = stop(console)
    assert (code, errors) == (0, "")
    assert token not in out + errors


def test_the_token_is_never_on_the_command_line() -> None:
    help_text = CliRunner().invoke(main, ["console", "--help"]).stdout
    assert "--token " not in help_text and "--token=" not in help_text
    done = processes.run([sys.executable, "-m", "fuseforks", "console", "--token", "x" * 20],
                         capture_output=True, text=True, timeout=60, env=environment(),
                         stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()  # click's words, in fuseforks' frame
    assert line.startswith("Error: ") and line.endswith(" Try 'fuseforks console --help'.")
    assert "--token" in line

