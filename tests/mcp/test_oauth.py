"""Remote MCP servers behind OAuth, with real parts: an authorization server and a protected MCP
server built with the `mcp` SDK's auth components (`tests/mcp/servers/oauth_server.py`, a real
process on two ports of 127.0.0.1), the SDK's OAuth client in the hub, a login driven as a
person's browser would drive it (`tests/helpers/oauth.py`), and the logins kept in a folder of
the test's own (`TokenFiles`)."""

from __future__ import annotations

import json
import logging
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.auth_utils import resource_url_from_server_url

from fuseforks.mcp import HttpServer, ToolHub, load_config
from fuseforks.mcp.login import logout
from fuseforks.mcp.oauth import login_hint
from fuseforks.mcp.tokens import TOKENS_VARIABLE, StoredLogin, TokenFiles, token_folder
from tests.helpers.oauth import OAuthServer, log_in, oauth_server

HINT = "fuseforks mcp login --config {config} design"


@pytest.fixture(scope="module")
def remote() -> Iterator[OAuthServer]:
    with oauth_server() as server:
        yield server


@pytest.fixture
def design(remote: OAuthServer, tmp_path: Path) -> HttpServer:
    """The remote server as an `mcpServers` file names it: a bare `url`, nothing said of auth."""
    [server] = load_config(remote.config(tmp_path))
    assert isinstance(server, HttpServer)
    return server


@pytest.fixture
def files(tmp_path: Path) -> TokenFiles:
    return TokenFiles(tmp_path / "tokens")


def kept(files: TokenFiles, server: HttpServer) -> dict[str, object]:
    return json.loads(files.path(resource_url_from_server_url(server.url)).read_text())


def states_since(remote: OAuthServer, seen: int) -> list[tuple[str, str | None]]:
    """(token state, tool) of every MCP request the server saw since the first `seen`."""
    return [(s["state"], s["tool"]) for s in remote.state()["seen"][seen:]]


async def test_a_server_that_asks_for_a_login_is_one_line_naming_the_command(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    clients = remote.state()["clients"]
    async with ToolHub([design], tokens=files) as hub:
        faults = dict(hub.start_faults)
        called = await hub.call("design__snapshot", {}, "en")
    hint = HINT.format(config=design.source)
    assert faults == {"design": f"server 'design' needs a login: {hint}"}
    # Each call tries again (a login may be made meanwhile), and says the same.
    assert called.fault == f"server 'design' needs a login: {hint}"
    # A process that is no login never registers a client nor sends anyone anywhere.
    assert remote.state()["clients"] == clients


async def test_a_login_then_an_image_tool_through_the_hub(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    clients = remote.state()["clients"]
    report, browser = await log_in(design, files)
    assert report.reason is None, report.reason
    assert (report.scope, report.tools) == ("images", 4)
    # Discovery found the authorization server on another port; fuseforks registered itself
    # as a public client, and asked with PKCE for a token of this server (the resource).
    assert remote.state()["clients"] == clients + 1
    assert browser.shown[-1].startswith(f"{remote.issuer}/authorize?")
    assert (browser.asked("code_challenge_method"), browser.asked("resource"),
            browser.asked("scope")) == ("S256", remote.url, "images")
    assert remote.state()["grants"][-1] == {"grant": "authorization_code",
                                            "resource": remote.url, "scopes": ["images"]}
    # Kept like a key: a folder of mode 0700, a file of mode 0600, with the expiry.
    assert stat.S_IMODE(files.folder.stat().st_mode) == 0o700
    path = Path(report.kept_in)
    assert path.parent == files.folder
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # noqa: ASYNC240 - a file of the test
    login = kept(files, design)
    assert login["client"]["token_endpoint_auth_method"] == "none"  # type: ignore[index]
    assert isinstance(login["expires_at"], float) and login["expires_at"] > time.time()

    async with ToolHub([design], tokens=files) as hub:  # any later process: no person
        assert hub.start_faults == {}
        output = await hub.call("design__snapshot", {}, "en")
    assert (output.fault, output.text) == (None, "the design board")
    [image] = output.images
    assert (image.width, image.height, image.path) == (320, 240, "pass_through")


async def test_an_access_token_that_expires_mid_session_is_refreshed(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    await log_in(design, files)
    async with ToolHub([design], tokens=files) as hub:
        first = await hub.call("design__snapshot", {}, "en")
        seen = len(remote.state()["seen"])
        remote.expire()  # the authorization server ends the token's life early: a 401
        second = await hub.call("design__snapshot", {}, "en")
    assert first.fault is None and second.fault is None and len(second.images) == 1
    assert states_since(remote, seen) == [("expired", "snapshot"), ("valid", "snapshot")]
    assert remote.state()["grants"][-1] == {"grant": "refresh_token", "resource": remote.url,
                                            "scopes": ["images"]}


async def test_a_kept_expiry_refreshes_the_token_before_it_is_sent(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    await log_in(design, files)
    remote.expire()
    path = files.path(resource_url_from_server_url(design.url))
    login = json.loads(path.read_text())
    login["expires_at"] = time.time() - 1  # as a process starting later finds it
    path.write_text(json.dumps(login))
    grants, seen = len(remote.state()["grants"]), len(remote.state()["seen"])
    async with ToolHub([design], tokens=files) as hub:
        output = await hub.call("design__snapshot", {}, "en")
    assert output.fault is None and len(output.images) == 1
    # Refreshed at the token endpoint discovery found at the login, before anything was sent:
    # the server never saw the expired token, and no new authorization was asked for.
    assert [g["grant"] for g in remote.state()["grants"][grants:]] == ["refresh_token"]
    assert {state for state, _ in states_since(remote, seen)} == {"valid"}
    assert kept(files, design)["expires_at"] > time.time()  # type: ignore[operator]


async def test_a_revoked_login_fails_the_tool_with_one_line(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    await log_in(design, files)
    async with ToolHub([design], tokens=files) as hub:
        assert (await hub.call("design__snapshot", {}, "en")).fault is None
        remote.revoke()
        refused = await hub.call("design__snapshot", {}, "en")
        grants = len(remote.state()["grants"])
        again = await hub.call("design__snapshot", {}, "en")
    line = ("server 'design' needs a login (its token was refused and could not be renewed): "
            + HINT.format(config=design.source))
    assert refused.fault == line and again.fault == line
    assert refused.is_error and refused.images == []
    assert not any(secret in line for secret in remote.secrets())
    assert len(remote.state()["grants"]) == grants  # the refused login is not tried again


async def test_a_step_up_is_named_and_the_next_login_asks_for_the_wider_scope(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    await log_in(design, files)
    clients = remote.state()["clients"]
    async with ToolHub([design], tokens=files) as hub:
        needs = await hub.call("design__paint", {}, "en")
        assert needs.fault == ("server 'design' needs a login with scope 'images draw': "
                               + HINT.format(config=design.source))
        assert kept(files, design)["wanted_scope"] == "images draw"
        report, browser = await log_in(design, files)  # a person, meanwhile
        painted = await hub.call("design__paint", {}, "en")  # the same hub, not restarted
    assert (report.reason, report.scope, browser.asked("scope")) == (
        None, "images draw", "images draw")
    # The first registration was for `images` only: fuseforks registered again for both.
    assert remote.state()["clients"] == clients + 1
    assert kept(files, design).get("wanted_scope") is None
    assert painted.fault is None and len(painted.images) == 1


async def test_configured_scopes_are_what_a_login_asks_for(
        remote: OAuthServer, tmp_path: Path, files: TokenFiles) -> None:
    config = remote.config(tmp_path, oauth={"scopes": ["images", "draw"]})
    [design] = load_config(config)
    assert isinstance(design, HttpServer)
    report, browser = await log_in(design, files)
    assert (report.scope, browser.asked("scope")) == ("images draw", "images draw")
    async with ToolHub([design], tokens=files) as hub:
        painted = await hub.call("design__paint", {}, "en")
    assert painted.fault is None and len(painted.images) == 1


async def test_a_refused_authorization_is_one_line_and_logs_no_traceback(
        remote: OAuthServer, design: HttpServer, files: TokenFiles,
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        report, _ = await log_in(design, files, allow=False)
    assert report.reason == ("login to server 'design' failed: the authorization server "
                             "answered access_denied")
    assert [r for r in caplog.records if r.exc_info or (
        r.name.startswith("mcp.client.auth") and r.levelno >= logging.WARNING)] == []


async def test_logout_revokes_the_login_at_the_server_and_deletes_it(
        remote: OAuthServer, design: HttpServer, files: TokenFiles) -> None:
    await log_in(design, files)
    tokens = kept(files, design)["tokens"]
    assert isinstance(tokens, dict)
    answers = len(remote.state()["revocations"])
    said = await logout(design, files)
    assert said == ("logged out of server 'design': the kept login is deleted; its revocation: "
                    "revoked")
    state = remote.state()
    assert {tokens["access_token"], tokens["refresh_token"]} <= set(state["revoked"])
    # The SDK's revocation handler refuses a public client's request without `client_secret`;
    # the request is sent again with it empty, as RFC 6749 allows, and is taken.
    assert state["revocations"][answers:] == [400, 200, 200]  # the second: with it at once
    assert not files.path(resource_url_from_server_url(design.url)).exists()
    assert await logout(design, files) == "no login to server 'design' is kept"


def test_the_token_folder_is_the_users_configuration_unless_told() -> None:
    assert token_folder({TOKENS_VARIABLE: "/run/tokens", "HOME": "/h"}) == Path("/run/tokens")
    assert token_folder({"XDG_CONFIG_HOME": "/h/cfg"}) == Path("/h/cfg/fuseforks/tokens")
    assert token_folder({}) == Path.home() / ".config" / "fuseforks" / "tokens"


def test_a_login_file_is_written_whole_with_mode_0600_and_a_damaged_one_is_ignored(
        tmp_path: Path) -> None:
    files = TokenFiles(tmp_path / "deep" / "tokens")
    login = StoredLogin(resource="https://design.example/mcp", server="design",
                        tokens={"access_token": "at-kept", "token_type": "Bearer"},
                        expires_at=1_900_000_000.0)
    files.write(login)
    files.write(login)  # again: renamed over the first
    path = files.path(login.resource)
    assert [p.name for p in files.folder.iterdir()] == [path.name]  # no temporary file left
    assert path.name.startswith("design.example-")
    assert stat.S_IMODE(files.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert files.read(login.resource) == login
    assert files.read("https://other.example/mcp") is None
    path.write_text("{not json")
    assert files.read(login.resource) is None
    assert files.delete(login.resource) and not files.delete(login.resource)


def test_the_login_hint_names_the_file_or_the_url() -> None:
    named = HttpServer(name="my design", url="https://design.example/mcp",
                       source="/home/me/My Servers/mcp.json")
    assert login_hint(named) == (
        "fuseforks mcp login --config '/home/me/My Servers/mcp.json' 'my design'")
    assert login_hint(HttpServer(name="d", url="https://design.example/mcp")) == (
        "fuseforks mcp login --url https://design.example/mcp")


@pytest.mark.parametrize("protected", [True, False])
async def test_calls_with_a_token_in_hand_run_side_by_side(
        tmp_path: Path, files: TokenFiles, protected: bool) -> None:
    """A server that answers each request with one JSON body sends its headers only once the
    result is there; the SDK's flow holds a lock from each request to its answer, which would
    make a second call wait for the first. `meet` answers only once two calls are in flight:
    a logged-in server, and one that never asked for OAuth, both take them at once."""
    with oauth_server("--json", *(() if protected else ("--open",))) as server:
        [design] = load_config(server.config(tmp_path))
        assert isinstance(design, HttpServer)
        if protected:
            await log_in(design, files)
        async with ToolHub([design], tokens=files) as hub:
            results: list[str] = []

            async def meet() -> None:
                results.append((await hub.call("design__meet", {}, "en")).text)

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    group.start_soon(meet)
                    group.start_soon(meet)
    assert results == ["met", "met"]
