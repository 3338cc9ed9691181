"""Who may read the console, checked on every request before any page is built.

The console shows a record that may name customers' tools, prompts and answers, so:

- it answers only GET and HEAD: no endpoint writes anything, and a request that could (any other
  method) is refused whatever its path.
- bound to a loopback address it answers only requests that name a loopback host (an address
  of 127.0.0.0/8, `localhost`, `[::1]`: the machine's own, by the one rule in
  `fuseforks.core.hosts` that also let it start without a token). A web page elsewhere can point a name it controls at
  127.0.0.1 (DNS rebinding) and have the visitor's browser read the console as a page of its own
  site; such a request names the page's host, not this one, and is refused.
- bound to any other address it needs a token, from the environment or a file, never the command
  line (where `ps` shows it to every user of the machine). A browser presents it once as
  `?token=…` and gets a cookie holding a keyed hash of it (not the token itself); a program sends
  `Authorization: Bearer …`. Both are compared in constant time.

Every response carries headers that keep its pages to themselves: no script, style or frame from
anywhere else, no referrer (a URL once held the token), nothing cached.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from html import escape
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fuseforks.core.hosts import is_loopback_host

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_ENV = "FUSEFORKS_CONSOLE_TOKEN"
COOKIE = "fuseforks_console"

HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
     b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def _host_name(header: str) -> str:
    """The host of a Host header, without its port."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """ASGI middleware in front of the pages. `token`: required on every request when given;
    `loopback_only`: refuse a request whose Host header names anything but this machine."""

    def __init__(self, app: App, *, token: str | None, loopback_only: bool) -> None:
        self.app = app
        self.token = token
        self.loopback_only = loopback_only
        self._session = (hmac.new(token.encode(), b"fuseforks console session",
                                  hashlib.sha256).hexdigest() if token else "")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope["headers"]}
        if scope["method"] not in ("GET", "HEAD"):
            await _refuse(with_headers, 405, "The console only reads: it answers GET and HEAD.",
                          [(b"allow", b"GET, HEAD")])
            return
        host = _host_name(headers.get("host", ""))
        if self.loopback_only and not is_loopback_host(host.lower()):
            await _refuse(with_headers, 403,
                          f"This console answers only to the addresses of this machine "
                          f"(127.0.0.0/8, localhost and [::1]); the request was addressed to "
                          f"{host or 'no host'!r}.")
            return
        if self.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.pop("token", None)
            if given is not None and hmac.compare_digest(given.encode(), self.token.encode()):
                await _signed_in(with_headers, scope["path"], query, self._session)
                return
            if not self._presented(headers):
                await _refuse(with_headers, 401,
                              "This console needs its token: open it with ?token=… added to "
                              "its address, or send Authorization: Bearer ….")
                return
        await self.app(scope, receive, with_headers)

    def _presented(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        authorization = headers.get("authorization", "")
        if authorization.lower().startswith("bearer ") and hmac.compare_digest(
                authorization[7:].strip().encode(), self.token.encode()):
            return True
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and hmac.compare_digest(value.encode(), self._session.encode()):
                return True
        return False


async def _signed_in(send: Send, path: str, query: dict[str, str], session: str) -> None:
    """The token was right: keep it as a cookie and go to the same page without it."""
    location = path + (f"?{urlencode(query)}" if query else "")
    cookie = f"{COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict"
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode()),
        (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


async def _refuse(send: Send, status: int, reason: str,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (f"<!doctype html><html lang=en><meta charset=utf-8><title>fuseforks console: "
            f"{status}</title><p>{escape(reason)}</p></html>\n").encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})
