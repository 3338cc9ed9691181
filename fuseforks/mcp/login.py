"""A person's login to a remote MCP server behind OAuth (`fuseforks mcp login`), and the logout.

The login connects to the server as any fuseforks process does, with a person at hand: the SDK's
flow discovers the authorization server, registers fuseforks (or uses the configured client),
and hands over the authorization address. It is printed, and opened in a browser where this
machine has one; the authorization server sends the browser back to a loopback address of this
machine (`http://127.0.0.1:PORT/callback`), where `Loopback` listens for the code. On a machine
without a browser the person opens the address elsewhere and pastes what the browser ends on —
the address with its `code`, or the code alone — on standard input. The tokens are kept
(`fuseforks.mcp.tokens`); every other process only uses them.

The loopback port is the configured `callbackPort`, else the one fuseforks registered with at an
earlier login (an authorization server holds a client to its exact redirect address), else one
the system picks, and then fuseforks registers again.
"""

from __future__ import annotations

import os
import sys
import threading
import webbrowser
from collections.abc import Callable
from contextlib import suppress
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import httpx2
import msgspec
from anyio.abc import Listener, SocketAttribute, SocketStream
from mcp.shared.auth import AuthorizationCodeResult
from mcp.shared.auth_utils import resource_url_from_server_url

from fuseforks.mcp import faults
from fuseforks.mcp.config import HttpServer
from fuseforks.mcp.hub import ToolHub
from fuseforks.mcp.oauth import code_from, revoke
from fuseforks.mcp.tokens import TokenFiles

DEFAULT_LOGIN_SECONDS = 300.0
"""Seconds a login waits for the person to authorize."""
_HEAD_BYTES = 16 * 1024
_PAGE = ("<!doctype html><meta charset=utf-8><title>fuseforks</title>"
         "<p>{}</p><p>You can close this page.</p>")


class LoginDenied(Exception):
    """The authorization server sent the person back with an error instead of a code."""


class LoginReport(msgspec.Struct, frozen=True, kw_only=True):
    """How a login went: `reason` is None when it succeeded."""

    server: str
    reason: str | None = None
    scope: str | None = None
    tools: int = 0
    kept_in: str = ""


def _has_browser() -> bool:
    """A browser can be opened here without taking over the terminal (a desktop session)."""
    if sys.platform == "darwin" or os.name == "nt":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("BROWSER"))


class Loopback:
    """A person at this machine (`fuseforks.mcp.oauth.Person`): shown the authorization address,
    back with a code at the loopback address or pasted."""

    def __init__(self, port: int, *, on_url: Callable[[str], None], open_browser: bool) -> None:
        self.port = port
        self._on_url = on_url
        self._open_browser = open_browser
        self._state: str | None = None
        self.answered = False
        self._answers, self._answered = anyio.create_memory_object_stream[
            AuthorizationCodeResult | LoginDenied](4)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def show(self, url: str) -> None:
        states = parse_qs(urlsplit(url).query).get("state")
        self._state = states[0] if states else None
        self._on_url(url)
        if self._open_browser and _has_browser():
            with suppress(webbrowser.Error):
                await anyio.to_thread.run_sync(webbrowser.open, url)

    async def code(self) -> AuthorizationCodeResult:
        answer = await self._answered.receive()
        if isinstance(answer, LoginDenied):
            raise answer
        return answer

    async def serve(self, listener: Listener[SocketStream]) -> None:
        """Answer the browser's visits to the loopback address until cancelled."""
        await listener.serve(self._visit)

    async def _visit(self, stream: SocketStream) -> None:
        async with stream:
            head = b""
            with anyio.move_on_after(30):
                while b"\r\n\r\n" not in head and len(head) < _HEAD_BYTES:
                    try:
                        head += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        return
            method, _, rest = head.partition(b" ")
            target = rest.partition(b" ")[0].decode("latin-1")
            parts = urlsplit(target)
            if method != b"GET" or parts.path != "/callback":
                await _respond(stream, 404, "Not a page of this login.")
                return
            query = parse_qs(parts.query)
            if "error" in query:
                error = query["error"][0]
                description = (query.get("error_description") or [""])[0]
                said = f"{error}: {description}" if description else error
                self.answered = True
                await self._answers.send(LoginDenied(
                    f"the authorization server answered {said[:200]}"))
                await _respond(stream, 200, f"The login was refused ({error}).")
                return
            answer = code_from(target, self._state)
            if answer is None:
                await _respond(stream, 400, "No authorization code in this address.")
                return
            self.answered = True
            await self._answers.send(answer)
            await _respond(stream, 200, "fuseforks is logged in.")

    def read_pasted(self) -> None:
        """Take an address or a code pasted on standard input, line by line. The reading
        thread is a daemon: a login that ends while it waits for a line does not wait for it."""
        token = anyio.lowlevel.current_token()

        def reader() -> None:
            for line in sys.stdin:
                try:
                    anyio.from_thread.run_sync(self._pasted, line, token=token)
                except Exception:  # the login has ended
                    return

        threading.Thread(target=reader, name="fuseforks login paste", daemon=True).start()

    def _pasted(self, line: str) -> None:
        answer = code_from(line, self._state)
        if answer is not None:
            self.answered = True
            with suppress(anyio.WouldBlock):
                self._answers.send_nowait(answer)


async def _respond(stream: SocketStream, status: int, text: str) -> None:
    body = _PAGE.format(text).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n")
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(head.encode() + body)


def _kept_port(server: HttpServer, files: TokenFiles) -> int | None:
    """The loopback port of the client an earlier login registered."""
    kept = files.read(resource_url_from_server_url(server.url))
    for uri in (kept.client or {}).get("redirect_uris") or [] if kept else []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return None


async def _listen(server: HttpServer, files: TokenFiles) -> Listener[SocketStream] | str:
    configured = server.oauth.callback_port if server.oauth else None
    ports = [configured] if configured else [p for p in (_kept_port(server, files), 0)
                                             if p is not None]
    for port in ports:
        try:
            return await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
        except OSError as error:
            if port == configured:
                return (f"the loopback port {port} (callbackPort) cannot be listened on: "
                        f"{error.strerror or error}")
    return "no loopback port could be listened on"


async def login(server: HttpServer, *, files: TokenFiles | None = None,
                on_url: Callable[[str], None], open_browser: bool = True,
                paste: bool = True, seconds: float = DEFAULT_LOGIN_SECONDS) -> LoginReport:
    """Log in to `server` with a person: connect, have them authorize, keep the tokens."""
    files = files if files is not None else TokenFiles()
    listening = await _listen(server, files)
    if isinstance(listening, str):
        return LoginReport(server=server.name, reason=listening)
    port = int(listening.extra(SocketAttribute.local_port))
    person = Loopback(port, on_url=on_url, open_browser=open_browser)
    config = msgspec.structs.replace(server, start_timeout=None)
    async with listening, anyio.create_task_group() as group:
        group.start_soon(person.serve, listening)
        if paste:
            person.read_pasted()
        async with ToolHub([config], start_timeout=seconds, tokens=files,
                           person=person) as hub:
            reason = hub.start_faults.get(server.name)
            tools = len(hub.list_tools())
        group.cancel_scope.cancel()
    if reason is not None:
        if not person.answered and reason == faults.handshake_timeout(server.name, seconds):
            reason = f"the login was not completed within {seconds:g} s"
        return LoginReport(server=server.name, reason=reason)
    resource = resource_url_from_server_url(server.url)
    kept = files.read(resource)
    scope = (kept.tokens or {}).get("scope") if kept else None
    return LoginReport(server=server.name, scope=scope, tools=tools,
                       kept_in=str(files.path(resource)))


async def logout(server: HttpServer, files: TokenFiles | None = None) -> str:
    """Revoke the login kept for `server` at its authorization server, where it can be, and
    delete it; what happened, in one line."""
    files = files if files is not None else TokenFiles()
    resource = resource_url_from_server_url(server.url)
    kept = files.read(resource)
    if kept is None:
        return f"no login to server {server.name!r} is kept"
    async with httpx2.AsyncClient(timeout=30.0) as http:
        said = await revoke(kept, http)
    files.delete(resource)
    return f"logged out of server {server.name!r}: the kept login is deleted; its revocation: {said}"
