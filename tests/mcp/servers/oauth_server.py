"""A remote MCP server behind OAuth, built with the `mcp` SDK's own auth components, as a vendor
would run one: an authorization server and a protected resource, each on its own port of
127.0.0.1, in one process.

    python oauth_server.py --as-port N --rs-port M [--token-seconds S] [--json] [--open]

The authorization server (`http://127.0.0.1:N`) serves the SDK's auth routes — metadata,
dynamic client registration, `/authorize`, `/token`, `/revoke` — over an
`OAuthAuthorizationServerProvider` kept in memory, and a consent page a test drives as a browser
would (`GET /consent?ticket=…` shows the form, `POST /consent` redirects to the client's
loopback address with the code). The MCP server (`http://127.0.0.1:M/mcp`) answers `401` with
`WWW-Authenticate: Bearer resource_metadata=…` without a token, publishes its protected-resource
metadata, accepts only tokens issued for its own URL (the `resource` indicator), and asks for
the scope `draw` (`403 insufficient_scope`, a step-up) before `paint` runs.

For the tests, the authorization server also answers `GET /admin/state` (every token, code and
client secret it ever issued, every bearer token the MCP server saw and whether it was good),
`POST /admin/expire` (every access token expires now) and `POST /admin/revoke` (every token is
revoked). `--json` answers each request with one JSON body (its headers only once the result
is there), `--open` serves the MCP server without OAuth. Nothing here is for production use.
"""

from __future__ import annotations

import base64
import json
import secrets
import sys
import time
from typing import Any

import anyio
import pictures
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

BASE_SCOPE = "images"
STEP_UP_SCOPE = "draw"


class Provider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """Clients, codes and tokens in memory, with a record of everything it issued."""

    def __init__(self, issuer: str, resource: str, token_seconds: int) -> None:
        self.issuer = issuer
        self.resource = resource
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.pairs: dict[str, str] = {}  # access token -> its refresh token
        self.revoked: set[str] = set()
        self.issued: dict[str, list[str]] = {"access": [], "refresh": [], "code": [],
                                             "client_secret": []}
        self.grants: list[dict[str, Any]] = []  # each token request: grant, resource, scopes
        self.seen: list[dict[str, Any]] = []  # each MCP request: token state, method, tool
        self.revocations: list[int] = []  # the status of each answer of /revoke

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info
        if client_info.client_secret:
            self.issued["client_secret"].append(client_info.client_secret)

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        ticket = secrets.token_urlsafe(16)
        self.pending[ticket] = (client.client_id, params)
        return f"{self.issuer}/consent?ticket={ticket}"

    def consent(self, ticket: str) -> str:
        """The redirect to the client once the person said yes: its code and state."""
        client_id, params = self.pending.pop(ticket)
        code = f"code-{secrets.token_urlsafe(24)}"
        self.issued["code"].append(code)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [BASE_SCOPE], expires_at=time.time() + 300,
            client_id=client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource, subject="person")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _tokens(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        if resource != self.resource:  # RFC 8707: a token only for this MCP server
            raise TokenError("invalid_target", f"unknown resource {resource!r}")
        access, refresh = f"at-{secrets.token_urlsafe(32)}", f"rt-{secrets.token_urlsafe(32)}"
        self.issued["access"].append(access)
        self.issued["refresh"].append(refresh)
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, resource=resource,
            expires_at=int(time.time()) + self.token_seconds, subject="person")
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource, subject="person")
        self.pairs[access] = refresh
        return OAuthToken(access_token=access, expires_in=self.token_seconds,
                          scope=" ".join(scopes), refresh_token=refresh)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.grants.append({"grant": "authorization_code", "resource": authorization_code.resource,
                            "scopes": authorization_code.scopes})
        return self._tokens(client.client_id, authorization_code.scopes,
                            authorization_code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        if refresh_token in self.revoked:
            return None
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.revoked.add(refresh_token.token)  # rotated: the old one is spent
        self.grants.append({"grant": "refresh_token", "resource": refresh_token.resource,
                            "scopes": scopes})
        return self._tokens(client.client_id, scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        if token in self.revoked:
            return None
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.revoked.add(token.token)
        paired = self.pairs.get(token.token)
        if paired is not None:
            self.revoked.add(paired)
        self.revoked.update(a for a, r in self.pairs.items() if r == token.token)

    def state_of(self, token: str | None) -> str:
        if token is None:
            return "none"
        if token in self.revoked:
            return "revoked"
        known = self.access.get(token)
        if known is None:
            return "unknown"
        if known.expires_at is not None and known.expires_at < time.time():
            return "expired"
        return "valid"


def authorization_app(provider: Provider) -> Starlette:
    async def consent_page(request: Request) -> Response:
        ticket = request.query_params["ticket"]
        _, params = provider.pending[ticket]
        scopes = " ".join(params.scopes or [BASE_SCOPE])
        return HTMLResponse(
            f'<form method="post" action="/consent"><p>Allow access ({scopes})?</p>'
            f'<input type="hidden" name="ticket" value="{ticket}">'
            '<button name="decision" value="allow">Allow</button></form>')

    async def consent(request: Request) -> Response:
        form = await request.form()
        return RedirectResponse(provider.consent(str(form["ticket"])), status_code=302)

    async def state(request: Request) -> Response:
        return JSONResponse({**provider.issued, "grants": provider.grants, "seen": provider.seen,
                             "clients": len(provider.clients),
                             "revoked": sorted(provider.revoked),
                             "revocations": provider.revocations})

    async def expire(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(provider.access)})

    async def revoke(request: Request) -> Response:
        provider.revoked.update(provider.access)
        provider.revoked.update(provider.refresh)
        return JSONResponse({"revoked": len(provider.access) + len(provider.refresh)})

    routes = create_auth_routes(
        provider, issuer_url=AnyHttpUrl(provider.issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[BASE_SCOPE, STEP_UP_SCOPE], default_scopes=[BASE_SCOPE]),
        revocation_options=RevocationOptions(enabled=True))
    routes = [_noting(route, provider) if route.path == "/revoke" else route for route in routes]
    routes += [Route("/consent", consent_page, methods=["GET"]),
               Route("/consent", consent, methods=["POST"]),
               Route("/admin/state", state, methods=["GET"]),
               Route("/admin/expire", expire, methods=["POST"]),
               Route("/admin/revoke", revoke, methods=["POST"])]
    return Starlette(routes=routes)


class _Noting:
    """The SDK's revocation route, noting the status of each answer."""

    def __init__(self, inner: Any, provider: Provider) -> None:
        self.inner = inner
        self.provider = provider

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def noted(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.provider.revocations.append(message["status"])
            await send(message)

        await self.inner(scope, receive, noted)


def _noting(route: Route, provider: Provider) -> Route:
    return Route(route.path, _Noting(route.app, provider), methods=list(route.methods or []))


def resource_server(provider: Provider, *, protected: bool = True) -> MCPServer:
    if protected:
        server = MCPServer(
            "design", log_level="WARNING", token_verifier=Verifier(provider),
            auth=AuthSettings(issuer_url=AnyHttpUrl(provider.issuer),
                              resource_server_url=AnyHttpUrl(provider.resource),
                              required_scopes=[BASE_SCOPE], validate_token_resource=True))
    else:
        server = MCPServer("design", log_level="WARNING")
    meeting: list[anyio.Event] = []

    @server.tool()
    async def meet() -> str:
        """Answers once another call of `meet` is in flight: two calls at once, or none."""
        if not meeting:
            meeting.append(anyio.Event())
            await meeting[0].wait()
            meeting.clear()
            return "met"
        meeting[0].set()
        return "met"

    @server.tool()
    def snapshot() -> CallToolResult:
        """A small red frame, as a JPEG."""
        data = pictures.solid_jpeg((255, 0, 0))
        return CallToolResult(content=[
            TextContent(text="the design board"),
            ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type="image/jpeg")])

    @server.tool()
    def paint() -> CallToolResult:
        """Paint the board green (needs the scope `draw`)."""
        data = pictures.solid_jpeg((0, 128, 0))
        return CallToolResult(content=[
            ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type="image/jpeg")])

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The Authorization header this call came with (a tool that echoes its token)."""
        lowered = {key.lower(): value for key, value in (ctx.headers or {}).items()}
        return f"you called with {lowered.get('authorization', '(none)')}"

    return server


class Verifier:
    """The resource server's token check: the provider's own table (one process)."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.provider.load_access_token(token)


class Watch:
    """In front of the MCP endpoint: notes the token each request carried and whether it was
    good, and answers a call to `paint` without the scope `draw` with a step-up challenge."""

    def __init__(self, app: Any, provider: Provider, metadata_url: str) -> None:
        self.app = app
        self.provider = provider
        self.metadata_url = metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        bearer = headers.get("authorization", "")
        token = bearer[7:] if bearer.lower().startswith("bearer ") else None
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        method, tool = None, None
        if scope["method"] == "POST" and body:
            try:
                decoded = json.loads(body)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                method = decoded.get("method")
                tool = (decoded.get("params") or {}).get("name")
        state = self.provider.state_of(token)
        self.provider.seen.append({"token": token, "state": state, "method": method,
                                   "tool": tool, "http": scope["method"]})
        if tool == "paint" and state == "valid" and token is not None:
            granted = self.provider.access[token].scopes
            if STEP_UP_SCOPE not in granted:
                challenge = (f'Bearer error="insufficient_scope", '
                             f'scope="{BASE_SCOPE} {STEP_UP_SCOPE}", '
                             f'resource_metadata="{self.metadata_url}"')
                await JSONResponse({"error": "insufficient_scope"}, status_code=403,
                                   headers={"WWW-Authenticate": challenge})(scope, receive, send)
                return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def serve(as_port: int, rs_port: int, token_seconds: int, *, protected: bool,
                json_response: bool) -> None:
    issuer = f"http://127.0.0.1:{as_port}"
    resource = f"http://127.0.0.1:{rs_port}/mcp"
    provider = Provider(issuer, resource, token_seconds)
    metadata_url = f"http://127.0.0.1:{rs_port}/.well-known/oauth-protected-resource/mcp"
    mcp_app = Watch(resource_server(provider, protected=protected).streamable_http_app(
        json_response=json_response), provider, metadata_url)
    servers = [
        uvicorn.Server(uvicorn.Config(authorization_app(provider), host="127.0.0.1",
                                      port=as_port, log_level="warning")),
        uvicorn.Server(uvicorn.Config(mcp_app, host="127.0.0.1", port=rs_port,
                                      log_level="warning", lifespan="on")),
    ]
    async with anyio.create_task_group() as group:
        for server in servers:
            group.start_soon(server.serve)


def main(argv: list[str]) -> None:
    as_port = int(argv[argv.index("--as-port") + 1])
    rs_port = int(argv[argv.index("--rs-port") + 1])
    seconds = int(argv[argv.index("--token-seconds") + 1]) if "--token-seconds" in argv else 3600
    anyio.run(lambda: serve(as_port, rs_port, seconds, protected="--open" not in argv,
                            json_response="--json" in argv))


if __name__ == "__main__":
    main(sys.argv)
