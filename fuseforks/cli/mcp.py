"""`fuseforks mcp`: check an MCP server the way the engine will use it.

`tools` lists what a configuration offers the model (prefixed names). `call` calls one tool on any
server — a command line after `--` (stdio), a `--url` (streamable HTTP, or HTTP+SSE with
`--transport sse`), or a server of a configuration — and prints the tool output as the model would
get it: the text exactly as the engine records and sends it (media that a server put in the text
is replaced by the privacy guard's marker, as in a turn), then one line per image (format, size,
digest, passed through or re-encoded) and one per dropped image with its reason. Image bytes are
never printed.

While a server is starting, a line on stderr every few seconds says which one is awaited
(`--mcp-start-timeout` bounds the wait; a server's own `startTimeout` wins).

`login` is a person's OAuth login to a remote server (`fuseforks.mcp.login`): the authorization
address is printed (and opened in a browser where there is one), the redirect comes back to a
loopback port, or the address the browser ended on is pasted; the tokens are kept in the token
folder, which every other command then uses. `logout` revokes them and deletes them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import click
import msgspec

from fuseforks.core.media import format_name
from fuseforks.core.names import LANGUAGES, Language
from fuseforks.core.texts import format_size
from fuseforks.events.privacy import elide_base64
from fuseforks.images.types import DroppedImage, NormalizedImage
from fuseforks.mcp import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_START_TIMEOUT,
    ConfigError,
    HttpServer,
    ServerConfig,
    StdioServer,
    ToolHub,
    load_config,
)
from fuseforks.mcp.config import tool_prefix
from fuseforks.mcp.hub import ToolDefinition
from fuseforks.mcp.login import DEFAULT_LOGIN_SECONDS, login, logout
from fuseforks.mcp.tokens import TokenFiles
from fuseforks.ports.tools import ToolOutput


class ImageRow(msgspec.Struct):
    index: int
    format: str
    width: int
    height: int
    size: int
    digest: str
    path: str
    source_format: str
    source_size: int


class DroppedRow(msgspec.Struct):
    index: int
    reason: str
    source_format: str | None
    detail: str


class CallReport(msgspec.Struct):
    """`call --json`: the tool output without any image bytes."""

    text: str
    is_error: bool
    fault: str | None
    images: list[ImageRow]
    dropped: list[DroppedRow]


def _tool_line(tool: ToolDefinition) -> str:
    summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
    return f"{tool.name}\t{summary}"


def _image_line(number: int, image: NormalizedImage) -> str:
    fmt = format_name(image.media_type)
    how = (
        "passed through"
        if image.path == "pass_through"
        else f"re-encoded from {image.source_format} {format_size(image.source_size)}"
    )
    return (
        f"image {number}: {fmt} {image.width}x{image.height} {format_size(image.size)} "
        f"sha256={image.digest} {how}"
    )


def _dropped_line(dropped: DroppedImage) -> str:
    fmt = f" {dropped.source_format}" if dropped.source_format else ""
    return f"dropped image {dropped.index + 1}:{fmt} {dropped.reason} ({dropped.detail})"


def model_text(output: ToolOutput) -> str:
    """The text as the model reads it: what the engine records for the result and sends on."""
    return elide_base64(output.text)


def _waiting(server: str, seconds: float) -> None:
    click.echo(f"waiting for server {server!r} to start ({seconds:g} s)", err=True)


def _start_timeout_options(command: Any) -> Any:
    """`--mcp-start-timeout` (the name `fuseforks run` uses too) and its former name."""
    seconds = click.FloatRange(min=0, min_open=True)
    command = click.option(
        "--connect-timeout", "connect_timeout", type=seconds, default=None, hidden=True,
        help="Former name of --mcp-start-timeout.",
    )(command)
    return click.option(
        "--mcp-start-timeout", "start_timeout", type=seconds, default=None,
        help=f"Seconds each server has to start, unless its configuration sets startTimeout "
        f"[default: {DEFAULT_START_TIMEOUT:g}].",
    )(command)


def _start_timeout(start_timeout: float | None, connect_timeout: float | None) -> float:
    for value in (start_timeout, connect_timeout):
        if value is not None:
            return value
    return DEFAULT_START_TIMEOUT


def render_report(output: ToolOutput) -> str:
    """The human form printed by `call`."""
    lines = [model_text(output)]
    lines += [_image_line(n, image) for n, image in enumerate(output.images, start=1)]
    lines += [_dropped_line(dropped) for dropped in output.dropped]
    return "\n".join(lines)


def report(output: ToolOutput) -> CallReport:
    return CallReport(
        text=model_text(output),
        is_error=output.is_error,
        fault=output.fault,
        images=[
            ImageRow(
                index=n,
                format=format_name(i.media_type),
                width=i.width,
                height=i.height,
                size=i.size,
                digest=i.digest,
                path=i.path,
                source_format=i.source_format,
                source_size=i.source_size,
            )
            for n, i in enumerate(output.images)
        ],
        dropped=[DroppedRow(d.index, d.reason, d.source_format, d.detail) for d in output.dropped],
    )


def _parse_call(argv: tuple[str, ...], remote: bool) -> tuple[list[str], str, dict[str, Any]]:
    """Split `COMMAND [ARGS...] TOOL [JSON_ARGS]` (or `TOOL [JSON_ARGS]` for a remote server)."""
    words = list(argv)
    arguments: dict[str, Any] = {}
    if words and words[-1].lstrip().startswith("{"):
        try:
            decoded = msgspec.json.decode(words.pop().encode())
        except msgspec.DecodeError as error:
            raise click.UsageError(f"JSON_ARGS is not valid JSON: {error}") from None
        if not isinstance(decoded, dict):
            raise click.UsageError("JSON_ARGS must be a JSON object")
        arguments = decoded
    if not words:
        raise click.UsageError("missing TOOL")
    tool = words.pop()
    if remote and words:
        raise click.UsageError(f"unexpected arguments before TOOL: {' '.join(words)}")
    if not remote and not words:
        raise click.UsageError("missing COMMAND: give `-- COMMAND [ARGS...] TOOL` or --url URL")
    return words, tool, arguments


def _pairs(values: tuple[str, ...], separator: str, option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        key, found, rest = value.partition(separator)
        if not found or not key:
            raise click.UsageError(f"{option} takes KEY{separator}VALUE, got {value!r}")
        pairs[key.strip()] = rest.strip() if separator == ":" else rest
    return pairs


def _not_callable(start_faults: dict[str, str], offered: list[str], name: str, typed: str,
                  *, prefixed: bool) -> str:
    """Why `name` cannot be called: the server did not start (its reason, not a tool error), or
    it has no such tool — named as the user typed it, with the tools it does have."""
    if start_faults:
        return "; ".join(start_faults.values())
    shown = [t.split("__", 1)[1] for t in offered] if prefixed else offered
    listing = ", ".join(shown) if shown else "none"
    return f"unknown tool {typed!r} (the server offers: {listing})"


@click.group()
def mcp() -> None:
    """Check MCP servers: list their tools, call one and see what the model would get."""


@mcp.command()
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="An mcpServers JSON file.",
)
@_start_timeout_options
def tools(config_path: Path, start_timeout: float | None, connect_timeout: float | None) -> None:
    """List every tool of the configured servers as the model is offered it."""
    seconds = _start_timeout(start_timeout, connect_timeout)
    try:
        servers = load_config(config_path)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None

    async def run() -> tuple[list[str], dict[str, str]]:
        async with ToolHub(servers, start_timeout=seconds, on_waiting=_waiting) as hub:
            return [_tool_line(tool) for tool in hub.list_tools()], dict(hub.start_faults)

    lines, start_faults = anyio.run(run)
    for line in lines:  # printed once the servers are stopped: a reader may leave at any line
        click.echo(line)
    for reason in start_faults.values():
        click.echo(f"fault: {reason}", err=True)
    if start_faults:
        sys.exit(1)


@mcp.command(context_settings={"ignore_unknown_options": True})
@click.option("--url", default=None, help="An HTTP endpoint instead of a command.")
@click.option(
    "--transport", type=click.Choice(["http", "sse"]), default="http", show_default=True,
    help="With --url: streamable HTTP, or the older HTTP+SSE transport.",
)
@click.option("--header", "headers", multiple=True, help="HTTP header KEY:VALUE (with --url).")
@click.option("--env", "env", multiple=True, help="Environment KEY=VALUE for the command.")
@click.option(
    "--config",
    "config_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Call a prefixed TOOL of an mcpServers file.",
)
@click.option("--language", type=click.Choice(LANGUAGES), default="en", show_default=True)
@click.option("--timeout", type=float, default=DEFAULT_CALL_TIMEOUT, show_default=True)
@_start_timeout_options
@click.option("--json", "as_json", is_flag=True, help="Print the output as JSON (no image bytes).")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def call(
    url: str | None,
    transport: str,
    headers: tuple[str, ...],
    env: tuple[str, ...],
    config_path: Path | None,
    language: Language,
    timeout: float,
    start_timeout: float | None,
    connect_timeout: float | None,
    as_json: bool,
    argv: tuple[str, ...],
) -> None:
    """Call one tool and print what the model would get.

    \b
    fuseforks mcp call [OPTIONS] -- COMMAND [ARGS...] TOOL [JSON_ARGS]
    fuseforks mcp call [OPTIONS] --url URL TOOL [JSON_ARGS]
    fuseforks mcp call [OPTIONS] --config FILE SERVER__TOOL [JSON_ARGS]

    Exit status: 0 for a result, 1 for a result the server marked isError, 2 for a fault.
    """
    seconds = _start_timeout(start_timeout, connect_timeout)
    remote = url is not None or config_path is not None
    command, tool, arguments = _parse_call(argv, remote)
    servers: list[ServerConfig]
    if config_path is not None:
        try:
            servers = load_config(config_path)
        except ConfigError as error:
            raise click.ClickException(str(error)) from None
        name = tool
    elif url is not None:
        server = urlsplit(url).netloc or "server"
        servers = [
            HttpServer(
                name=server,
                url=url,
                headers=_pairs(headers, ":", "--header"),
                transport="sse" if transport == "sse" else "http",
            )
        ]
        name = f"{tool_prefix(server)}__{tool}"
    else:
        server = Path(command[0]).name or "server"
        env_pairs = _pairs(env, "=", "--env")
        servers = [StdioServer(name=server, command=command[0], args=command[1:], env=env_pairs)]
        name = f"{tool_prefix(server)}__{tool}"

    async def run() -> ToolOutput | str:
        async with ToolHub(
            servers, call_timeout=timeout, start_timeout=seconds, on_waiting=_waiting
        ) as hub:
            offered = [t.name for t in hub.list_tools()]
            if name not in offered:
                return _not_callable(hub.start_faults, offered, name, tool, prefixed=config_path
                                     is None)
            return await hub.call(name, arguments, language)

    output = anyio.run(run)
    if isinstance(output, str):  # no call was made: why, as the user typed it
        click.echo(f"fault: {output}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(msgspec.json.encode(report(output)).decode())
    else:
        click.echo(render_report(output))
    if output.fault is not None:
        sys.exit(2)
    if output.is_error:
        sys.exit(1)


def _remote(config_path: Path | None, url: str | None, name: str | None) -> HttpServer:
    """The server a login is for: a server of the configuration by name, or a URL."""
    if url is not None:
        if config_path is not None or name is not None:
            raise click.UsageError("give either --url URL or --config FILE SERVER")
        return HttpServer(name=urlsplit(url).netloc or "server", url=url, auth="oauth")
    if config_path is None or name is None:
        raise click.UsageError("give --config FILE SERVER (or --url URL)")
    try:
        servers = load_config(config_path)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    found = next((s for s in servers if s.name == name), None)
    if found is None:
        names = ", ".join(s.name for s in servers) or "none"
        raise click.ClickException(f"{config_path}: no server {name!r} (its servers: {names})")
    if not isinstance(found, HttpServer):
        raise click.ClickException(f"server {name!r} is started as a command, not reached over "
                                   "HTTP: it has nothing to log in to")
    if found.auth == "none":
        raise click.ClickException(f'server {name!r} says "auth": "none"')
    return found


_REMOTE_OPTIONS = [
    click.option("--config", "config_path", default=None,
                 type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="The mcpServers file that names SERVER."),
    click.option("--url", default=None, help="A server's URL instead of --config FILE SERVER."),
    click.argument("name", metavar="[SERVER]", required=False),
]


def _remote_options(command: Any) -> Any:
    for option in reversed(_REMOTE_OPTIONS):
        command = option(command)
    return command


@mcp.command(name="login")
@_remote_options
@click.option("--no-browser", is_flag=True,
              help="Only print the authorization address (the browser may be elsewhere).")
@click.option("--timeout", "seconds", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_LOGIN_SECONDS, show_default=True,
              help="Seconds to wait for the authorization.")
def login_command(config_path: Path | None, url: str | None, name: str | None,
                  no_browser: bool, seconds: float) -> None:
    """Log in to a remote MCP server behind OAuth, once, for every later command.

    \b
    fuseforks mcp login --config FILE SERVER
    fuseforks mcp login --url URL

    Prints the authorization address (and opens it in a browser where this machine has one).
    The authorization server sends the browser back to a loopback port of this machine; on a
    machine without a browser, open the address elsewhere and paste here the address the
    browser ends on (or its code). The tokens are kept in the token folder
    ($FUSEFORKS_TOKENS, else ~/.config/fuseforks/tokens), mode 0600.
    """
    server = _remote(config_path, url, name)

    def show(address: str) -> None:
        click.echo(f"To log in to {server.name!r}, open this address:\n\n  {address}\n", err=True)
        click.echo("Waiting for the authorization server's redirect to this machine (or paste "
                   "here the address the browser ends on, or its code).", err=True)

    report = anyio.run(lambda: login(server, files=TokenFiles(), on_url=show,
                                     open_browser=not no_browser, seconds=seconds))
    if report.reason is not None:
        raise click.ClickException(report.reason)
    scope = f" (scope: {report.scope})" if report.scope else ""
    click.echo(f"logged in to {server.name!r}{scope}: {report.tools} tools; the login is kept "
               f"in {report.kept_in}")


@mcp.command(name="logout")
@_remote_options
def logout_command(config_path: Path | None, url: str | None, name: str | None) -> None:
    """Revoke and delete the login kept for a remote MCP server.

    \b
    fuseforks mcp logout --config FILE SERVER
    fuseforks mcp logout --url URL
    """
    server = _remote(config_path, url, name)
    click.echo(anyio.run(lambda: logout(server, TokenFiles())))


@mcp.command()
@click.argument("client_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--config", "config_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="The mcpServers file to write for the gateway (a new file).")
def adopt(client_file: Path, config_path: Path) -> None:
    """Take a client's MCP servers into a new mcpServers file for the gateway.

    \b
    fuseforks mcp adopt ~/.cursor/mcp.json --config ~/mcp.json

    Every server of CLIENT_FILE (a client's "mcpServers", or VS Code's "servers") is written as
    it stands, leaving out any entry that runs a fuseforks gateway. CLIENT_FILE is not changed:
    give the client the gateway's own entry instead (fuseforks gateway --snippet).
    """
    from fuseforks.gateway.adopt import adopt as adopt_servers

    if config_path.exists():
        raise click.ClickException(f"{config_path}: already exists; adopting writes a new file")
    try:
        document = msgspec.json.decode(client_file.read_bytes())
        kept, gateways = adopt_servers(document)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        raise click.ClickException(f"{client_file}: not valid JSON ({error})") from None
    except ConfigError as error:
        raise click.ClickException(f"{client_file}: {error}") from None
    for name in gateways:
        click.echo(f"left out {name!r}: it runs a fuseforks gateway", err=True)
    try:  # mode 0600: a client's entries may hold keys in their environment or headers
        config_path.touch(mode=0o600, exist_ok=False)
    except OSError as error:
        raise click.ClickException(f"{config_path}: cannot write it ({error.strerror})") from None
    config_path.write_bytes(msgspec.json.format(msgspec.json.encode({"mcpServers": kept}),
                                                indent=2) + b"\n")
    click.echo(f"adopted {len(kept)} servers of {client_file} into {config_path}; give the "
               f"client the gateway instead: fuseforks gateway --config {config_path} "
               "--snippet CLIENT")
