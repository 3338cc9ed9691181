"""The `mcpServers` JSON that MCP clients share, read so a user's existing file works unchanged.

Accepted per server: `{"command", "args", "env", "cwd"}` (stdio) or `{"url", "headers"}`
(streamable HTTP, or the older HTTP+SSE transport with `"type": "sse"`). `"type"` may name the
transport — `stdio`, `http` (also spelled `streamable-http`, `streamable_http`, `streamableHttp`)
or `sse` — and must then agree with the keys given; any other type (`websocket`, ...) is refused
with a one-line error naming the server and the supported types, never guessed at.

`"startTimeout"`: seconds a server has to start (spawn, handshake, tool list) before it is given
up on; a positive number. It wins over the hub's default (`fuseforks run --mcp-start-timeout`,
`fuseforks mcp ... --mcp-start-timeout`), which is 30 s. The name is fuseforks' own: other clients
spell such settings differently or not at all, and ignore keys they do not know.

Authorization of a server reached over HTTP (`fuseforks.mcp.oauth`): a server that answers `401`
with an MCP authorization challenge (`WWW-Authenticate: Bearer resource_metadata=…`) is logged in
to with OAuth, unless its entry sends its own `Authorization` header or says `"auth": "none"`.
`"auth": "oauth"` asks for OAuth whatever the challenge says (a server of the 2025-03-26
authorization, which publishes no resource metadata). `"oauth": {"clientId", "clientSecret",
"scopes", "callbackPort"}` gives a client registered beforehand, the scopes a login asks for
(instead of those the server's challenge names), and the loopback port of the login's redirect;
it implies `"auth": "oauth"`.

`"tools": {"allow": [...], "deny": [...]}`: which of the server's tools are offered, by
`fnmatch` globs (`*`, `?`, `[...]`, case counts) on the server's own tool name, not the prefixed
one. An empty or missing `allow` lets every tool through; `deny` wins over `allow`. A tool left
out is neither listed nor callable: a call to it is refused as a call to an unknown tool.

Other keys other clients add (`disabled`, `autoApprove`, `timeout`, ...) are ignored rather than
rejected; `"disabled": true` skips the server. `${VAR}` in a string value is expanded from the
caller's environment, as other clients do: that is the one explicit way to hand a server a key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

import msgspec

from fuseforks.core.errors import ConfigError

_STREAMABLE_HTTP = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
SUPPORTED_TYPES = "stdio, http (streamable HTTP), sse"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")




class ToolFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which of a server's tools are offered (the entry's `tools`): those matching a glob of
    `allow` (every tool when it is empty) and none of `deny`."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def allows(self, tool: str) -> bool:
        """Whether the server's own tool `tool` is offered."""
        if any(fnmatchcase(tool, pattern) for pattern in self.deny):
            return False
        return not self.allow or any(fnmatchcase(tool, pattern) for pattern in self.allow)


class StdioServer(msgspec.Struct, frozen=True, kw_only=True):
    """A server started as a subprocess and spoken to over its stdin/stdout."""

    name: str
    command: str
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    start_timeout: float | None = None  # seconds; None: the hub's default
    tools: ToolFilter = ToolFilter()


HttpTransport = Literal["http", "sse"]
Auth = Literal["auto", "oauth", "none"]


class OAuthClient(msgspec.Struct, frozen=True, kw_only=True):
    """How fuseforks presents itself to a server's authorization server (the entry's `oauth`).

    Without a `client_id` fuseforks registers itself (dynamic client registration) at its first
    login, as a public client; `scopes` are asked for instead of those the server's challenge
    names; `callback_port` is the loopback port the login's redirect comes back to (a client
    registered beforehand is registered with one exact redirect URI)."""

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    callback_port: int | None = None


class HttpServer(msgspec.Struct, frozen=True, kw_only=True):
    """A server reached over HTTP: streamable HTTP, or the older HTTP+SSE transport (`sse`).

    `auth`: `auto` logs in with OAuth when the server's `401` is an MCP authorization challenge
    and no `Authorization` header is configured, `oauth` always, `none` never. `source`: the
    `mcpServers` file the entry was read from, which a login hint names."""

    name: str
    url: str
    headers: dict[str, str] = {}
    transport: HttpTransport = "http"
    start_timeout: float | None = None  # seconds; None: the hub's default
    auth: Auth = "auto"
    oauth: OAuthClient | None = None
    source: str | None = None
    tools: ToolFilter = ToolFilter()


ServerConfig = StdioServer | HttpServer


SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|cookie|session|bearer|"
                         r"private|signature", re.IGNORECASE)
"""A configuration entry named like this holds a secret."""


def oauth_mode(server: ServerConfig) -> Literal["oauth", "auto"] | None:
    """Whether a server is logged in to with OAuth: `oauth` always, `auto` when its `401` is an
    MCP authorization challenge, None never (stdio, `"auth": "none"`, or a configured
    `Authorization` header, which is the server's key already)."""
    if isinstance(server, StdioServer) or server.auth == "none":
        return None
    if server.auth == "oauth":
        return "oauth"
    if any(name.lower() == "authorization" for name in server.headers):
        return None
    return "auto"


def secret_entries(server: ServerConfig) -> dict[str, str]:
    """The server's secrets, each by a name that says where it was configured: the values of its
    environment entries and HTTP headers named like secrets, the token of such a header
    that carries a scheme (`Bearer …`), and a configured OAuth client secret."""
    entries = server.env if isinstance(server, StdioServer) else server.headers
    named: dict[str, str] = {}
    if isinstance(server, HttpServer) and server.oauth and server.oauth.client_secret:
        named[f"{server.name}.oauth.clientSecret"] = server.oauth.client_secret
    for name, value in entries.items():
        if SECRET_NAME.search(name):
            named[f"{server.name}.{name}"] = value
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                named[f"{server.name}.{name} token"] = token
    return named


def tool_prefix(server_name: str) -> str:
    """The prefix of a server's tools (`cam` -> `cam__live_view_image`); provider tool names
    allow only letters, digits, `_` and `-`, so anything else becomes `_`."""
    return _UNSAFE_NAME.sub("_", server_name)


def _expand(value: str, environ: Mapping[str, str], where: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: environment variable {name} is not set")

    return _VAR.sub(replace, value)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where} must be a list of strings")
    return value


def _string_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{where} must be an object of strings")
    return value


def _start_timeout(entry: dict[str, Any], where: str) -> float | None:
    value = entry.get("startTimeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{where}.startTimeout must be a positive number of seconds")
    return float(value)


def _tool_filter(entry: dict[str, Any], where: str) -> ToolFilter:
    """The entry's `tools`, checked."""
    given = entry.get("tools", {})
    if not isinstance(given, dict):
        raise ConfigError(f'{where}.tools must be an object of "allow" and "deny" lists')
    unknown = sorted(set(given) - {"allow", "deny"})
    if unknown:
        raise ConfigError(f"{where}.tools: unknown key {unknown[0]!r} (known: allow, deny)")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("allow", "deny"):
        patterns = _strings(given.get(key, []), f"{where}.tools.{key}")
        if "" in patterns:
            raise ConfigError(f"{where}.tools.{key}: a pattern must not be empty")
        lists[key] = tuple(patterns)
    return ToolFilter(allow=lists["allow"], deny=lists["deny"])


def _oauth(entry: dict[str, Any], environ: Mapping[str, str], where: str
           ) -> tuple[Auth, OAuthClient | None]:
    """The entry's `auth` and `oauth`, checked."""
    auth = entry.get("auth", "auto")
    if auth not in ("auto", "oauth", "none"):
        raise ConfigError(f'{where}.auth must be "oauth" or "none"')
    given = entry.get("oauth")
    if given is None:
        return auth, None
    if auth == "none":
        raise ConfigError(f'{where}: "oauth" contradicts "auth": "none"')
    if not isinstance(given, dict):
        raise ConfigError(f"{where}.oauth must be an object")
    unknown = sorted(set(given) - {"clientId", "clientSecret", "scopes", "callbackPort"})
    if unknown:
        raise ConfigError(f"{where}.oauth: unknown key {unknown[0]!r} (known: clientId, "
                          "clientSecret, scopes, callbackPort)")
    text: dict[str, str | None] = {}
    for key in ("clientId", "clientSecret"):
        value = given.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{where}.oauth.{key} must be a non-empty string")
        text[key] = None if value is None else _expand(value, environ, f"{where}.oauth.{key}")
    if text["clientSecret"] is not None and text["clientId"] is None:
        raise ConfigError(f"{where}.oauth: clientSecret needs clientId")
    scopes = _strings(given.get("scopes", []), f"{where}.oauth.scopes")
    port = given.get("callbackPort")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int)
                             or not 0 < port < 65536):
        raise ConfigError(f"{where}.oauth.callbackPort must be a port number (1-65535)")
    return "oauth", OAuthClient(client_id=text["clientId"], client_secret=text["clientSecret"],
                                scopes=tuple(scopes), callback_port=port)


def _server(name: str, entry: Any, environ: Mapping[str, str]) -> ServerConfig | None:
    where = f"mcpServers.{name}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object")
    if entry.get("disabled") is True:
        return None
    kind = entry.get("type")
    if kind is not None and (
        not isinstance(kind, str) or kind not in _STREAMABLE_HTTP | {"stdio", "sse"}
    ):
        raise ConfigError(
            f"{where}: transport type {kind!r} is not supported (supported: {SUPPORTED_TYPES})"
        )
    start_timeout = _start_timeout(entry, where)
    tools = _tool_filter(entry, where)
    if kind is None:
        kind = "http" if "url" in entry else "stdio" if "command" in entry else None
    if kind in _STREAMABLE_HTTP or kind == "sse":
        if "url" not in entry:
            raise ConfigError(f'{where}: type {entry["type"]!r} needs "url"')
        if not isinstance(entry["url"], str):
            raise ConfigError(f"{where}.url must be a string")
        headers = _string_map(entry.get("headers", {}), f"{where}.headers")
        auth, oauth = _oauth(entry, environ, where)
        if auth == "oauth" and any(k.lower() == "authorization" for k in headers):
            raise ConfigError(f'{where}: an "Authorization" header and OAuth exclude each other')
        return HttpServer(
            name=name,
            url=_expand(entry["url"], environ, f"{where}.url"),
            headers={k: _expand(v, environ, f"{where}.headers.{k}") for k, v in headers.items()},
            transport="sse" if kind == "sse" else "http",
            start_timeout=start_timeout,
            auth=auth,
            oauth=oauth,
            tools=tools,
        )
    if kind == "stdio":
        if "auth" in entry or "oauth" in entry:
            raise ConfigError(f'{where}: "auth" and "oauth" are for a server reached by "url"')
        if "command" not in entry:
            raise ConfigError(f'{where}: type "stdio" needs "command"')
        if not isinstance(entry["command"], str) or not entry["command"]:
            raise ConfigError(f"{where}.command must be a non-empty string")
        args = _strings(entry.get("args", []), f"{where}.args")
        env = _string_map(entry.get("env", {}), f"{where}.env")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}.cwd must be a string")
        return StdioServer(
            name=name,
            command=_expand(entry["command"], environ, f"{where}.command"),
            args=[_expand(a, environ, f"{where}.args") for a in args],
            env={k: _expand(v, environ, f"{where}.env.{k}") for k, v in env.items()},
            cwd=cwd,
            start_timeout=start_timeout,
            tools=tools,
        )
    raise ConfigError(f'{where} needs either "command" (stdio) or "url" (streamable HTTP)')


def parse_config(document: Any, environ: Mapping[str, str] | None = None) -> list[ServerConfig]:
    """Servers of an `{"mcpServers": {...}}` document, in file order, disabled ones left out."""
    environ = os.environ if environ is None else environ
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise ConfigError('the configuration must be an object with an "mcpServers" object')
    servers: list[ServerConfig] = []
    prefixes: dict[str, str] = {}
    for name, entry in document["mcpServers"].items():
        if not name:
            raise ConfigError("mcpServers: a server name must not be empty")
        server = _server(name, entry, environ)
        if server is None:
            continue
        prefix = tool_prefix(name)
        if prefix in prefixes:
            raise ConfigError(
                f"mcpServers: {prefixes[prefix]!r} and {name!r} give the same tool prefix {prefix!r}"
            )
        prefixes[prefix] = name
        servers.append(server)
    return servers


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> list[ServerConfig]:
    """Read and parse an `mcpServers` JSON file; every error names the file."""
    raw = Path(path).read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start})") from None
    try:
        document = msgspec.json.decode(raw)
    except msgspec.DecodeError as error:
        raise ConfigError(f"{path}: not valid JSON ({error})") from None
    try:
        servers = parse_config(document, environ)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    return [msgspec.structs.replace(s, source=str(path)) if isinstance(s, HttpServer) else s
            for s in servers]
