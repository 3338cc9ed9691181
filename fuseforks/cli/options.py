"""The options every command that runs turns shares (`run`, `chat`), and the `Agent` they make."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from fuseforks.agent.settings import AgentSettings
from fuseforks.cli.sources import STORE, check_file_target, check_store_target
from fuseforks.core.errors import ConfigError, MissingKey
from fuseforks.core.names import LANGUAGES, WIRE_NAMES, WireName
from fuseforks.mcp.config import ServerConfig, load_config
from fuseforks.stores.open import open_record
from fuseforks.stores.urls import DatabaseUrl
from fuseforks.wires.registry import resolve_endpoint

F = TypeVar("F", bound=Callable[..., Any])
DEFAULTS = AgentSettings()

_OPTIONS = [
    click.option("--wire", type=click.Choice(WIRE_NAMES), required=True,
                 help="The provider's request format."),
    click.option("--model", required=True, callback=lambda c, p, v: not_empty(v, p),
                 help="The model name the provider knows."),
    click.option("--base-url", default=None, callback=lambda c, p, v: http_url(v, p),
                 help="The provider's address, if not its public one (a local server, a proxy): "
                      "an http:// or https:// URL."),
    click.option("--mcp-config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 default=None, help="A JSON file with an `mcpServers` object: the tools' servers."),
    click.option("--mcp-start-timeout", type=click.FloatRange(min=0, min_open=True),
                 default=DEFAULTS.mcp_start_timeout, show_default=True,
                 help="Seconds an MCP server may take to start (a server's own `startTimeout` "
                      "wins)."),
    click.option("--allow-missing-servers", is_flag=True, default=DEFAULTS.allow_missing_servers,
                 help="Send turns even when an MCP server of --mcp-config did not start (without "
                      "its tools); by default such a turn is not sent."),
    click.option("--language", type=click.Choice(LANGUAGES), default=DEFAULTS.language,
                 show_default=True,
                 help="The language of every sentence fuseforks adds for the model."),
    click.option("--system", default=DEFAULTS.system, help="The system prompt."),
    click.option("--db", type=STORE, default="fuseforks.db", show_default=True,
                 envvar="FUSEFORKS_DB", show_envvar=True,
                 help="The store turns are recorded into: an SQLite file (created if missing) or "
                      "a PostgreSQL URL (postgresql://user:password@host/database); the "
                      "FUSEFORKS_DB environment variable sets it too."),
    click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path),
                 default="fuseforks.log", show_default=True,
                 help="The log file the turns' lines are appended to."),
    click.option("--agent", default=DEFAULTS.name, show_default=True,
                 help="The agent's name in the record and the log."),
    click.option("--max-rounds", type=click.IntRange(min=1), default=DEFAULTS.max_rounds,
                 show_default=True, help="Tool rounds before the closing summary call (at least 1)."),
    click.option("--image-cap", type=click.IntRange(min=0), default=DEFAULTS.image_cap,
                 show_default=True, help="Tool images one request may carry, the newest kept."),
]


def not_empty(value: str, param: click.Parameter | None = None) -> str:
    """`value`, unless it is empty or blank."""
    if not value.strip():
        raise click.BadParameter("must not be empty", param=param)
    return value


def http_url(value: str | None, param: click.Parameter | None = None,
             hint: str | None = None) -> str | None:
    """`value`, if it is an http:// or https:// URL with a host: anything else would only be
    retried as a connection error (and shown with an empty host)."""
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise click.BadParameter(f"{value!r} is not an http:// or https:// URL", param=param,
                                 param_hint=hint)
    return value


def check_conversation(db: Path | DatabaseUrl, conversation: str) -> None:
    """Refuse a conversation id the store does not hold (the turn would quietly start a new
    one, and the user lose the history without knowing); `new` and `last` are not ids."""
    if not conversation.strip():
        raise click.BadParameter("must not be empty (`new` starts a conversation)",
                                 param_hint="'--conversation'")
    if conversation in ("new", "last"):
        return
    held = False
    if isinstance(db, DatabaseUrl) or db.exists():
        with open_record(db) as record:
            held = bool(record.conversation(conversation))
    if not held:
        raise click.ClickException(
            f"{db}: no conversation {conversation!r}; give --conversation new to start one "
            "(or last to continue the latest)")


def stream_option(command: F) -> F:
    """`--no-stream`: the answer printed once complete, not as it arrives."""
    return click.option(
        "--no-stream", "no_stream", is_flag=True, default=False,
        help="Print the model's answer once it is complete instead of as it arrives "
             "(the turn's record is the same either way).")(command)


def agent_options(command: F) -> F:
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def build_agent_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """`Agent` keyword arguments from the shared options, after checking what can be checked
    before anything starts: the key, the store and the log file."""
    check_key(options["wire"], options["base_url"])
    servers = read_mcp_config(options["mcp_config"])
    db = options["db"]
    check_store_target(db)
    check_file_target(options["log_file"], "log")
    return {
        "wire": options["wire"], "model": options["model"], "base_url": options["base_url"],
        "mcp": servers, "db": db.url if isinstance(db, DatabaseUrl) else db,
        "log": options["log_file"],
        "settings": AgentSettings(
            name=options["agent"], language=options["language"], system=options["system"],
            max_rounds=options["max_rounds"], image_cap=options["image_cap"],
            mcp_start_timeout=options["mcp_start_timeout"],
            allow_missing_servers=options["allow_missing_servers"]),
    }


def read_mcp_config(path: str | None) -> list[ServerConfig] | None:
    """The servers of an `mcpServers` file, read and checked before anything starts: a file
    that is not what it should be is one line naming it (exit 1)."""
    if path is None:
        return None
    try:
        return load_config(path)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"{path}: {error.strerror}") from None


def check_key(wire: WireName, base_url: str | None) -> None:
    """Refuse to start without the wire's key, by the one rule of `resolve_endpoint`."""
    try:
        resolve_endpoint(wire, base_url)
    except MissingKey as error:
        raise click.ClickException(str(error)) from None



