"""OAuth for remote MCP servers, through the `mcp` SDK's OAuth client (`OAuthClientProvider`).

The SDK runs the flow the MCP authorization specification describes: on a server's `401` it
discovers the protected resource's metadata and its authorization server, registers a client
(dynamic client registration) unless one is configured, sends a person to authorize with PKCE
and the `resource` indicator, exchanges the code, refreshes an expired token, and answers a
`403 insufficient_scope` with a step-up. `ServerAuth` is that provider with what fuseforks adds:

- **Logins are kept** (`fuseforks.mcp.tokens`): tokens, the client, the expiry of the access
  token, and what discovery found — so a process that starts with a kept login (a worker, the
  gateway, the next `run`) refreshes an expired token against the right token endpoint instead
  of sending it, and takes up a login another process wrote since (a refresh, a new login).
- **A token refused with a `401` is refreshed once** before anything else; the SDK alone would
  start a new authorization.
- **A request with a token in hand goes at once**, beside any other: the SDK's flow holds one
  lock from each request to its answer, so a server that sends its headers with its result would
  take one call at a time. Only a refresh or a login is one at a time. So does every request to
  an `auto` server that has not asked for OAuth (nothing of the flow touches it).
- **Only a login asks a person** (`fuseforks mcp login`, `fuseforks.mcp.login`). Anywhere else —
  `Agent`, `run`, `chat`, workers, the gateway — a server that wants a login it does not have
  (none kept, one refused and not renewable, a wider scope) answers as it did, and the
  connection names the reason in one line with the command that fixes it
  (`server 'design' needs a login: fuseforks mcp login --config mcp.json design`).
- **The scope a login asks for** is the configured `scopes`, else the server's challenge (the
  SDK's choice), and in either case a step-up the server asked for earlier (kept with the
  login).
- **Every token, code and client secret is a known secret** (`Secrets`) the moment it is
  known: the record, the log and every reason hold a marker instead.
- **The SDK's flow errors are not printed** with their tracebacks: its OAuth log records are
  kept as debug lines without one, and fuseforks says the reason in one line.

`revoke` is RFC 7009 revocation at logout.
"""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import AsyncGenerator
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import extract_field_from_www_auth, union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import resource_url_from_server_url
from pydantic import AnyUrl, ValidationError

from fuseforks.events.secrets import Secrets
from fuseforks.mcp import faults
from fuseforks.mcp.config import HttpServer, OAuthClient, oauth_mode
from fuseforks.mcp.tokens import StoredLogin, TokenFiles

logger = logging.getLogger("fuseforks.mcp")

REFRESH_MARGIN = 60.0
"""Seconds before its expiry that a token counts as expired (at most a tenth of its life): it
is refreshed before it is sent, never sent to be refused."""
_SCOPE = re.compile(r'(?<![A-Za-z_])scope=(?:"[^"]*"|[^\s,]+)')
_NO_REDIRECT = "http://127.0.0.1/callback"
"""The redirect URI of a client that is never sent to a person (a process that is not a login):
a registration needs one, and such a process never registers."""


class Person(Protocol):
    """Someone at a login who opens the authorization address and comes back with a code
    (`fuseforks.mcp.login.Loopback`)."""

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the code: a loopback address of this machine."""
        ...

    async def show(self, url: str) -> None:
        """Send the person to the authorization address (print it, open a browser)."""

    async def code(self) -> AuthorizationCodeResult:
        """The code and state the authorization server redirected to the loopback address
        with (or that the person pasted)."""
        ...


def login_hint(server: HttpServer) -> str:
    """The command that logs in to `server`: its configuration file and name, or its URL."""
    if server.source is not None:
        return (f"fuseforks mcp login --config {shlex.quote(server.source)} "
                f"{shlex.quote(server.name)}")
    return f"fuseforks mcp login --url {shlex.quote(server.url)}"


def _scopes(scope: str | None) -> set[str]:
    return set((scope or "").split())


class _SdkRecords(logging.Filter):
    """The SDK logs its OAuth flow's failures with full tracebacks, and their messages may
    quote an answer of the server. fuseforks says the reason in one line itself: those records
    are dropped, the rest kept without a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return record.levelno < logging.WARNING


_SDK_LOGGER = logging.getLogger("mcp.client.auth.oauth2")
_FILTER = _SdkRecords()


def quiet_sdk_records() -> None:
    """Keep the SDK's OAuth records off the user's terminal (see `_SdkRecords`); idempotent."""
    if _FILTER not in _SDK_LOGGER.filters:
        _SDK_LOGGER.addFilter(_FILTER)


class _Storage:
    """The SDK's `TokenStorage`, kept in the login file of the server's URL."""

    def __init__(self, auth: ServerAuth) -> None:
        self._auth = auth

    async def get_tokens(self) -> OAuthToken | None:
        return self._auth.context.current_tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._auth.keep_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._auth.context.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._auth.keep_client(client_info)


class ServerAuth(OAuthClientProvider):
    """The OAuth of one server: an `httpx2.Auth` for its connection's HTTP client.

    `problem`: why the last request the server refused could not be authorized, in one line,
    until the connection takes it (`take_problem`)."""

    def __init__(self, server: HttpServer, files: TokenFiles, *, secrets: Secrets,
                 person: Person | None = None) -> None:
        quiet_sdk_records()
        self.server = server
        self.files = files
        self.resource = resource_url_from_server_url(server.url)
        self.problem: str | None = None
        self._secrets = secrets
        self._person = person
        self._settings = server.oauth or OAuthClient()
        self._mode = "oauth" if person is not None else oauth_mode(server)
        self._version: tuple[int, int] | None = None
        self._refused: set[str] = set()
        self._wanted: str | None = None
        self._challenged = False  # the server asked for OAuth (an `auto` server)
        redirect = person.redirect_uri if person is not None else _NO_REDIRECT
        secret = self._settings.client_secret
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect)], client_name="fuseforks",
            token_endpoint_auth_method="client_secret_post" if secret else "none",
            scope=" ".join(self._settings.scopes) or None)
        super().__init__(server.url, metadata, _Storage(self),
                         redirect_handler=self._show if person is not None else None,
                         callback_handler=self._code if person is not None else None)

    # -- what is kept ----------------------------------------------------------------------

    def _stored(self) -> StoredLogin:
        return self.files.read(self.resource) or StoredLogin(resource=self.resource,
                                                             server=self.server.name)

    def _write(self, login: StoredLogin) -> None:
        login.server = self.server.name
        self.files.write(login)
        self._version = self.files.version(self.resource)

    def _learn(self, tokens: OAuthToken | None = None,
               client: OAuthClientInformationFull | None = None) -> None:
        name = self.server.name
        named: dict[str, str] = {}
        if tokens is not None:
            named[f"{name} access token"] = tokens.access_token
            if tokens.refresh_token:
                named[f"{name} refresh token"] = tokens.refresh_token
        if client is not None and client.client_secret:
            named[f"{name} client secret"] = client.client_secret
        self._secrets.learn(named)

    def _configured_client(self) -> OAuthClientInformationFull | None:
        settings = self._settings
        if settings.client_id is None:
            return None
        redirect = self.context.client_metadata.redirect_uris or []
        return OAuthClientInformationFull(
            client_id=settings.client_id, client_secret=settings.client_secret,
            redirect_uris=list(redirect), scope=self.context.client_metadata.scope,
            token_endpoint_auth_method="client_secret_post" if settings.client_secret
            else "none")

    def _usable_client(self, stored: dict[str, Any] | None) -> OAuthClientInformationFull | None:
        """The kept client, when it can serve: registered for the loopback address a login
        listens on and for the scope it asks for (an authorization server holds a client to
        both); any kept client otherwise."""
        configured = self._configured_client()
        if configured is not None:
            return configured
        if stored is None:
            return None
        try:
            client = OAuthClientInformationFull.model_validate(stored)
        except ValidationError:
            return None
        if self._person is not None:
            redirect = AnyUrl(self._person.redirect_uri)
            wanted = _scopes(self._wanted) | set(self._settings.scopes)
            if redirect not in (client.redirect_uris or []) or not wanted <= _scopes(client.scope):
                return None  # registered again at this login
        return client

    def load(self) -> bool:
        """Take up the kept login (at the first request, and whenever another process wrote
        it since); True when it was written since it was last taken up."""
        version = self.files.version(self.resource)
        changed = version != self._version
        if not changed and self._initialized:
            return False
        self._version = version
        stored = self.files.read(self.resource)
        context = self.context
        self._wanted = stored.wanted_scope if stored is not None else None
        context.client_info = self._usable_client(stored.client if stored else None)
        context.current_tokens = None
        context.token_expiry_time = None
        if stored is not None:
            try:
                if stored.authorization_server is not None:
                    context.oauth_metadata = OAuthMetadata.model_validate(
                        stored.authorization_server)
                if stored.protected_resource is not None:
                    prm = ProtectedResourceMetadata.model_validate(stored.protected_resource)
                    context.protected_resource_metadata = prm
                    if prm.authorization_servers:
                        context.auth_server_url = str(prm.authorization_servers[0])
                tokens = (OAuthToken.model_validate(stored.tokens)
                          if stored.tokens is not None else None)
            except ValidationError:
                tokens = None
            if (tokens is not None and self._person is None
                    and tokens.access_token not in self._refused):
                context.current_tokens = tokens
                context.token_expiry_time = _due(stored.expires_at, tokens.expires_in)
                self._learn(tokens=tokens)
            if context.client_info is not None:
                self._learn(client=context.client_info)
        self._initialized = True
        return changed

    def login_changed(self) -> bool:
        """A login was kept (or changed) since this server's login was last taken up."""
        return self.files.version(self.resource) != self._version

    async def _initialize(self) -> None:
        """The SDK's start of a flow: the kept login, with its expiry and discovery."""
        self.load()

    def keep_tokens(self, tokens: OAuthToken) -> None:
        """New tokens (a login, a refresh): kept with their expiry and what discovery found."""
        self._learn(tokens=tokens)
        expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in else None
        self.context.token_expiry_time = _due(expires_at, tokens.expires_in)
        login = self._stored()
        login.tokens = tokens.model_dump(mode="json", exclude_none=True)
        login.expires_at = expires_at
        if self.context.client_info is not None:
            login.client = self.context.client_info.model_dump(mode="json", exclude_none=True)
        if self.context.oauth_metadata is not None:
            login.authorization_server = self.context.oauth_metadata.model_dump(
                mode="json", exclude_none=True)
        if self.context.protected_resource_metadata is not None:
            login.protected_resource = self.context.protected_resource_metadata.model_dump(
                mode="json", exclude_none=True)
        if _scopes(login.wanted_scope) <= _scopes(tokens.scope):
            login.wanted_scope = None
        self._write(login)

    def keep_client(self, client: OAuthClientInformationFull) -> None:
        self._learn(client=client)
        login = self._stored()
        login.client = client.model_dump(mode="json", exclude_none=True)
        self._write(login)

    def _want(self, scope: str) -> None:
        """A step-up asked for `scope`: the next login asks for it."""
        login = self._stored()
        login.wanted_scope = union_scopes(login.wanted_scope, scope)
        self._wanted = login.wanted_scope
        self._write(login)

    # -- the flow --------------------------------------------------------------------------

    def take_problem(self) -> str | None:
        problem, self.problem = self.problem, None
        return problem

    async def _auth_flow(self, request: httpx2.Request
                         ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """A request with the token in hand goes at once, beside any other (the SDK's flow
        holds one lock across each request and its answer); a refusal goes to the SDK's flow,
        after one refresh, or is handed back as it is where no person is at hand."""
        self.load()
        renewed = False
        if self._at_once():
            tokens = self.context.current_tokens
            if tokens is not None:
                request.headers["Authorization"] = f"Bearer {tokens.access_token}"
            response = yield request
            verdict = self._verdict(request, response, renewed)
            if verdict == "stand":
                return
            renewed = verdict == "renew"  # else "forward": the SDK's flow asks a person
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request:
                    verdict = self._verdict(request, response, renewed)
                    if verdict == "stand":
                        return
                    if verdict == "renew":
                        renewed = True
                        await flow.aclose()
                        flow = super()._auth_flow(request)
                        outgoing = await flow.__anext__()
                        continue
                    self._widen(response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as failure:
            if self._person is None and not isinstance(failure, OAuthFlowError):
                raise  # the network, not the login: a transport failure like any other
            self.problem = self._secrets.text(faults.login_failed(self.server.name, failure))
            request.headers.pop("Authorization", None)
            yield request  # the server's own refusal is the answer; the reason is `problem`
        finally:
            await flow.aclose()

    def _at_once(self) -> bool:
        """The request needs nothing of the flow: a token in hand that has not expired, or a
        server that has not asked for OAuth (`auto`, nothing kept)."""
        if self._person is not None:
            return False
        if self._mode == "auto" and not self._engaged() and not self._challenged:
            return True
        return self.context.current_tokens is not None and self.context.is_token_valid()

    def _verdict(self, request: httpx2.Request, response: httpx2.Response,
                 renewed: bool) -> str:
        """What becomes of the server's answer: `stand` (it is the answer), `renew` (a refresh,
        or a login another process kept, first), `forward` (the SDK's flow, with a person), or
        — none at hand — the answer stands and `problem` says what would fix it."""
        status = response.status_code
        error = extract_field_from_www_auth(response, "error")
        if status not in (401, 403) or (status == 403 and error != "insufficient_scope"):
            if status < 400:
                self.problem = None
            return "stand"
        if (status == 401 and self._mode == "auto" and not self._engaged()
                and extract_field_from_www_auth(response, "resource_metadata") is None):
            return "stand"  # not an MCP authorization challenge
        self._challenged = True
        if status == 401 and not renewed and (self.context.can_refresh_token() or self.load()):
            tokens = self.context.current_tokens
            sent = request.headers.get("Authorization")
            if tokens is not None and sent == f"Bearer {tokens.access_token}":
                self.context.token_expiry_time = 0.5  # the refused token: refreshed first
            return "renew"
        if self._person is not None:
            return "forward"
        self.problem = self._secrets.text(self._needs(response, error))
        return "stand"

    def _engaged(self) -> bool:
        """This server has been logged in to (a login is kept, or was made here)."""
        return self.context.current_tokens is not None or self.context.client_info is not None

    def _needs(self, response: httpx2.Response, error: str | None) -> str:
        """Why the refused request cannot be authorized without a person, with the command
        that fixes it."""
        hint = login_hint(self.server)
        if response.status_code == 403:
            granted = self.context.current_tokens.scope if self.context.current_tokens else None
            scope = union_scopes(granted, extract_field_from_www_auth(response, "scope"))
            if scope:
                self._want(scope)
            return faults.needs_scope(self.server.name, scope, hint)
        tokens = self.context.current_tokens
        stored = self._stored().tokens
        refused = tokens.access_token if tokens else (stored or {}).get("access_token")
        if refused:  # not sent again by this process, unless a new login is written
            self._refused.add(str(refused))
            self.context.clear_tokens()
            return faults.login_refused(self.server.name, hint)
        return faults.needs_login(self.server.name, hint)

    def _widen(self, response: httpx2.Response) -> None:
        """The scope a login asks for: the configured scopes, else what the server's challenge
        (or, without one, its metadata) names; and a step-up kept from before."""
        configured = " ".join(self._settings.scopes) or None
        if configured is None and self._wanted is None:
            return  # the SDK's own choice: the challenge, else the server's metadata
        base = configured or extract_field_from_www_auth(response, "scope")
        prm = self.context.protected_resource_metadata
        if base is None and prm is not None and prm.scopes_supported:
            base = " ".join(prm.scopes_supported)
        scope = union_scopes(base, self._wanted)
        challenge = response.headers.get("WWW-Authenticate", "Bearer")
        if _SCOPE.search(challenge):
            challenge = _SCOPE.sub(f'scope="{scope}"', challenge)
        else:
            challenge = f'{challenge.rstrip(", ")}, scope="{scope}"'
        response.headers["WWW-Authenticate"] = challenge

    async def _show(self, url: str) -> None:
        assert self._person is not None
        await self._person.show(url)

    async def _code(self) -> AuthorizationCodeResult:
        assert self._person is not None
        result = await self._person.code()
        self._secrets.learn({f"{self.server.name} authorization code": result.code})
        return result


def _due(expires_at: float | None, lifetime: int | str | None) -> float | None:
    """When a token counts as expired: `REFRESH_MARGIN` seconds before it does (at most a
    tenth of its life); None when the server gave no lifetime."""
    if expires_at is None:
        return None
    life = int(lifetime) if lifetime else REFRESH_MARGIN * 10
    return expires_at - min(REFRESH_MARGIN, life / 10)


async def revoke(login: StoredLogin, http: httpx2.AsyncClient) -> str:
    """Revoke a kept login at its authorization server (RFC 7009): the refresh token, then the
    access token. Returns what the server said, in a few words: `revoked`, or why not.

    A public client has no secret, and RFC 6749 lets it send an empty `client_secret` where
    one is asked for; some servers (those built on the SDK's revocation handler) refuse a
    revocation without the parameter, so a refusal of a public client's request is sent once
    more with it empty."""
    try:
        server = OAuthMetadata.model_validate(login.authorization_server or {})
        client = OAuthClientInformationFull.model_validate(login.client or {})
        tokens = OAuthToken.model_validate(login.tokens or {})
    except ValidationError:
        return "nothing to revoke"
    if server.revocation_endpoint is None:
        return "the server offers no revocation"
    endpoint = str(server.revocation_endpoint)
    refused: list[str] = []
    empty_secret = False  # learnt at the first refusal: the second token is sent with it
    for token, hint in ((tokens.refresh_token, "refresh_token"),
                        (tokens.access_token, "access_token")):
        if not token:
            continue
        form = {"token": token, "token_type_hint": hint, "client_id": client.client_id}
        basic = (client.client_secret is not None
                 and client.token_endpoint_auth_method == "client_secret_basic")
        if client.client_secret and not basic:
            form["client_secret"] = client.client_secret
        elif empty_secret:
            form["client_secret"] = ""
        try:
            if basic:
                assert client.client_secret is not None
                answer = await http.post(endpoint, data=form, auth=httpx2.BasicAuth(
                    client.client_id, client.client_secret))
            else:
                answer = await http.post(endpoint, data=form)
            if answer.status_code == 400 and not client.client_secret and not empty_secret:
                empty_secret = True
                answer = await http.post(endpoint, data={**form, "client_secret": ""})
        except httpx2.HTTPError as error:
            return f"the server could not be reached ({type(error).__name__})"
        if answer.status_code != 200:
            refused.append(f"HTTP {answer.status_code}{_error_code(answer)}")
    if refused:
        return f"the server refused to revoke it ({refused[0]})"
    return "revoked"


def _error_code(answer: httpx2.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    return f" {error}" if isinstance(error, str) and error.isascii() and len(error) < 40 else ""


def code_from(text: str, state: str | None) -> AuthorizationCodeResult | None:
    """What a person pasted: the address the authorization server redirected to (its code and
    state), or the code alone (the state is the one the login sent)."""
    text = text.strip()
    if not text:
        return None
    if "://" in text or text.startswith("/") or "code=" in text:
        query = parse_qs(urlsplit(text).query or text.lstrip("?"))
        codes = query.get("code")
        if not codes:
            return None
        states, issuers = query.get("state"), query.get("iss")
        return AuthorizationCodeResult(code=codes[0], state=states[0] if states else state,
                                       iss=issuers[0] if issuers else None)
    return AuthorizationCodeResult(code=text, state=state)
