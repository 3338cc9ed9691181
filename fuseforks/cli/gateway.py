"""`fuseforks gateway --config FILE`: an MCP server in front of the servers of an `mcpServers`
file, for any MCP client, with fuseforks' image rules and a record of every session."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import anyio
import click

from fuseforks.cli.options import read_mcp_config
from fuseforks.cli.sources import STORE, Location, check_file_target, check_store_target
from fuseforks.core.errors import ConfigError, FuseforksError
from fuseforks.core.hosts import is_loopback_host
from fuseforks.core.names import LANGUAGES, Language
from fuseforks.edge.serving import check_token
from fuseforks.gateway.http import TOKEN_ENV
from fuseforks.gateway.itself import runs_this_gateway
from fuseforks.gateway.names import TOOL_NAMINGS, ToolNaming
from fuseforks.gateway.profiles import CODE_TOKENS_ENV, PROFILE_NAMES, LimitOverrides
from fuseforks.gateway.serve import Gateway, GatewayOptions, HttpOptions
from fuseforks.gateway.sessions import GatewaySettings
from fuseforks.gateway.snippets import SNIPPET_CLIENTS, launcher
from fuseforks.gateway.snippets import snippet as gateway_snippet
from fuseforks.mcp.connection import DEFAULT_CALL_TIMEOUT, DEFAULT_START_TIMEOUT

_POSITIVE = click.IntRange(min=1)
_SECONDS = click.FloatRange(min=0, min_open=True)


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8765; port 0 "
                                 "lets the system choose)", param_hint="--http")
    return host, int(port)


def _token(token_file: Path | None) -> str | None:
    """The bearer token from `--token-file` or the environment, as long as the console's."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise click.ClickException(f"{token_file}: cannot read the token "
                                       f"({error.strerror})") from None
        if not token:
            raise click.ClickException(f"{token_file}: the token file is empty")
        where = str(token_file)
    else:
        token, where = os.environ.get(TOKEN_ENV, "").strip(), TOKEN_ENV
        if not token:
            return None
    try:
        return check_token(token)
    except ConfigError as error:
        raise click.ClickException(f"{where}: {error}") from None


@click.command(epilog=f"""\b
Examples:
  fuseforks gateway --config mcp.json
  fuseforks gateway --config mcp.json --profile claude-code
  {TOKEN_ENV}=… fuseforks gateway --config mcp.json --http 0.0.0.0:8765 \\
      --allow-host gateway.lan:8765

\b
What a client's configuration needs, with absolute paths:
  fuseforks gateway --config mcp.json --snippet claude-desktop""")
@click.option("--config", "config_file", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The mcpServers JSON file of the servers to stand in front of.")
@click.option("--http", "address", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio. Any address "
                   f"but a loopback one needs a bearer token ({TOKEN_ENV} or --token-file).")
@click.option("--profile", type=click.Choice(PROFILE_NAMES), default="auto", show_default=True,
              help="The limits of the client in front: auto picks by the client's name "
                   "(claude-desktop, claude-code; structured-first for Codex CLI and "
                   "opencode, which read structuredContent alone and would lose the images; "
                   "vscode for VS Code: a 768 px short edge, no WebP), "
                   "image-rules (1568 px, as a turn sends images) for any other; api-limits "
                   "keeps only what APIs accept (generic is its old name).")
@click.option("--max-edge", type=_POSITIVE, default=None,
              help="Long edge of a sent image, in pixels (over the profile's).")
@click.option("--max-image-bytes", type=_POSITIVE, default=None,
              help="Bytes of one sent image (over the profile's).")
@click.option("--max-images", type=click.IntRange(min=0), default=None,
              help="Images per tool result (over the profile's).")
@click.option("--max-result-bytes", type=_POSITIVE, default=None,
              help="Bytes of a whole tool result as sent (over the profile's).")
@click.option("--max-result-tokens", type=_POSITIVE, default=None,
              help="Tokens of a whole tool result, four characters each (over the profile's; "
                   f"claude-code reads {CODE_TOKENS_ENV} as Claude Code does).")
@click.option("--tool-names", type=click.Choice(TOOL_NAMINGS), default="prefixed",
              show_default=True,
              help="prefixed: server__tool, as the engine names tools; plain: a server's own "
                   "name where no other server has a tool of that name.")
@click.option("--language", type=click.Choice(LANGUAGES), default="en", show_default=True,
              help="The language of the notes the gateway adds to results.")
@click.option("--db", "db", type=STORE, default=None, envvar="FUSEFORKS_DB",
              help="The store sessions are recorded into (SQLite file or PostgreSQL URL); "
                   "default: fuseforks.db beside the --config file.")
@click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="A log file the sessions' lines are appended to.")
@click.option("--name", "agent", default="gateway", show_default=True,
              help="The gateway's name in the record and the log.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"A file holding the HTTP bearer token (else {TOKEN_ENV}).")
@click.option("--allow-host", multiple=True, metavar="HOST:PORT",
              help="A Host header HTTP clients may use (besides the bound address).")
@click.option("--allow-origin", multiple=True, metavar="ORIGIN",
              help="An Origin header HTTP clients may send (browsers send one).")
@click.option("--call-timeout", type=_SECONDS, default=DEFAULT_CALL_TIMEOUT, show_default=True,
              help="Seconds a tool call may take; a server that did not answer is restarted.")
@click.option("--mcp-start-timeout", type=_SECONDS, default=DEFAULT_START_TIMEOUT,
              show_default=True, help="Seconds an MCP server may take to start.")
@click.option("--pin", is_flag=True,
              help="Keep from clients a tool whose description or input schema changed since "
                   "this gateway last offered it (at start or while it runs), until approved "
                   "with --approve.")
@click.option("--approve", multiple=True, metavar="TOOL",
              help="Offer this changed tool (as clients see its name) with the definition it "
                   "has as the gateway starts.")
@click.option("--snippet", type=click.Choice(SNIPPET_CLIENTS), default=None,
              help="Print what CLIENT's configuration needs to start this gateway (absolute "
                   "paths), and exit.")
def gateway(config_file: Path, address: str | None, profile: str, max_edge: int | None,
            max_image_bytes: int | None, max_images: int | None, max_result_bytes: int | None,
            max_result_tokens: int | None, tool_names: ToolNaming, language: Language,
            db: Location | None, log_file: Path | None, agent: str, token_file: Path | None,
            allow_host: tuple[str, ...], allow_origin: tuple[str, ...], call_timeout: float,
            mcp_start_timeout: float, pin: bool, approve: tuple[str, ...],
            snippet: str | None) -> None:
    """Stand in front of MCP servers for any MCP client, with the image rules.

    An MCP server (stdio, or streamable HTTP with --http) offering the tools, resources and
    prompts of every server in --config. Every tool result's images are normalized, capped and
    noted as fuseforks does for its own turns, within the limits of the client in front
    (--profile), and each client session is recorded in the store like a turn: `fuseforks
    turns`, `log`, `audit --client` and `replay` read it."""
    if snippet is not None:
        click.echo(gateway_snippet(snippet, config_file, launcher()))
        return
    servers = []
    for server in read_mcp_config(str(config_file)) or []:
        if runs_this_gateway(server, config_file):  # it would start itself again and again
            click.echo(f"fuseforks gateway: skipped mcpServers.{server.name}: it runs this "
                       "gateway on this same config file, and would start it again and again",
                       err=True)
        else:
            servers.append(server)
    store: Location = db if db is not None else config_file.resolve().parent / "fuseforks.db"
    check_store_target(store)
    if log_file is not None:
        check_file_target(log_file, "log")
    http = None
    if address is not None:
        host, port = _address(address)
        token = _token(token_file)
        if token is None and not is_loopback_host(host):
            raise click.ClickException(
                f"--http {address}: any address but a loopback one needs a bearer token: set "
                f"{TOKEN_ENV} or give --token-file (never on the command line)")
        http = HttpOptions(host=host, port=port, token=token, allow_hosts=list(allow_host),
                           allow_origins=list(allow_origin))
    settings = GatewaySettings(
        agent=agent, transport="stdio" if http is None else "http", profile=profile,
        overrides=LimitOverrides(max_edge_px=max_edge, max_bytes=max_image_bytes,
                                 max_images=max_images, result_max_bytes=max_result_bytes,
                                 result_max_tokens=max_result_tokens),
        naming=tool_names, language=language, pin=pin, approve=approve)
    options = GatewayOptions(servers=servers, settings=settings, store=store, log=log_file,
                             http=http, call_timeout=call_timeout,
                             start_timeout=mcp_start_timeout)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="fuseforks gateway: %(message)s")
    # The SDK logs a server's garbage with a traceback; fuseforks says it in one line itself.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)

    def started(line: str) -> None:  # MCP clients keep a stdio server's stderr in their logs
        click.echo(f"fuseforks gateway: {line}", err=True)

    def listening(url: str) -> None:
        click.echo(f"fuseforks gateway listening on {url}", err=True)

    try:
        code = anyio.run(Gateway(options, on_started=started, on_listening=listening).run)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from None
    sys.exit(code)
