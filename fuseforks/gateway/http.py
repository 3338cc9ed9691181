"""The gateway over streamable HTTP: the SDK's app, its security settings, and uvicorn.

The gateway hands a client every tool of every configured server, so who may reach it matters:

- It binds 127.0.0.1 unless told otherwise. Any other address needs a bearer token (from the
  environment or a file, never the command line, where other users of the machine can read it);
  with a token, every request must carry `Authorization: Bearer <token>`, and one that does not is
  refused with 401 and a `WWW-Authenticate: Bearer` header (the SDK's bearer middleware, RFC
  6750), before anything reaches the MCP handlers.
- The `Host` and `Origin` headers are checked as the MCP transport asks (DNS rebinding: a web
  page in a browser must not reach a local server under a name it controls): on 127.0.0.1 only
  local names and origins are allowed; elsewhere the address it binds and what the user allows.
  A foreign `Origin` is refused with 403, a foreign `Host` with 421 (the SDK's transport
  security).

A client that deletes its HTTP session ends the recorded session (`on_delete`).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fuseforks.core.errors import FuseforksError
from fuseforks.core.hosts import is_loopback_host
from fuseforks.edge.serving import Listener

logger = logging.getLogger("fuseforks.gateway")
PATH = "/mcp"
TOKEN_ENV = "FUSEFORKS_GATEWAY_TOKEN"
LOCAL_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOCAL_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


class StaticToken:
    """The SDK's `TokenVerifier` for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="bearer", client_id="gateway-client", scopes=[])
        return None


def security(host: str, port: int, allow_hosts: Sequence[str],
             allow_origins: Sequence[str]) -> TransportSecuritySettings:
    """Which `Host` and `Origin` headers are accepted (see the module docstring)."""
    if is_loopback_host(host):
        return TransportSecuritySettings(allowed_hosts=[*LOCAL_HOSTS, *allow_hosts],
                                         allowed_origins=[*LOCAL_ORIGINS, *allow_origins])
    if host in ("0.0.0.0", "::") and not allow_hosts:
        raise FuseforksError(f"listening on every address ({host}) needs --allow-host with the "
                             "name and port clients use to reach the gateway (HOST:PORT)")
    bound = f"[{host}]" if ":" in host else host
    return TransportSecuritySettings(allowed_hosts=[f"{bound}:{port}", *allow_hosts],
                                     allowed_origins=list(allow_origins))


def http_app(server: Server[Any], settings: TransportSecuritySettings, token: str | None,
             on_delete: Callable[[str], Awaitable[None]]) -> ASGIApp:
    """The SDK's streamable HTTP app at `/mcp`, with the bearer check when there is a token."""
    auth: dict[str, Any] = {}
    if token is not None:
        # The SDK's bearer middleware needs an issuer; with no resource server URL nothing
        # advertises it, and the gateway runs no authorization server.
        auth = {"auth": AuthSettings(issuer_url=AnyHttpUrl("http://127.0.0.1"),
                                     resource_server_url=None),
                "token_verifier": StaticToken(token)}
    app = server.streamable_http_app(streamable_http_path=PATH, transport_security=settings,
                                     **auth)
    return _Deletions(app, on_delete)


class _Deletions:
    """Tells `on_delete` the session id of every `DELETE /mcp` the app accepted."""

    def __init__(self, app: ASGIApp, on_delete: Callable[[str], Awaitable[None]]) -> None:
        self.app = app
        self.on_delete = on_delete

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "DELETE":
            await self.app(scope, receive, send)
            return
        session_id = next((value.decode() for name, value in scope["headers"]
                           if name == b"mcp-session-id"), None)
        status: list[int] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, receive, sending)
        if session_id and status and status[0] < 300:
            await self.on_delete(session_id)


def listener(app: ASGIApp, host: str, port: int) -> Listener:
    return Listener(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                   lifespan="on", timeout_graceful_shutdown=2))
