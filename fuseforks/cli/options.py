"""The options every command that runs turns shares (`run`, `chat`), and the `Agent` they make."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fuseforks.agent.settings import AgentSettings
from fuseforks.cli.sources import STORE, check_file_target, check_store_target
from fuseforks.core.errors import ConfigError
from fuseforks.core.names import LANGUAGES, WIRE_NAMES, WireName
from fuseforks.mcp.config import ServerConfig, load_config
from fuseforks.stores.postgres_sql import DatabaseUrl
from fuseforks.wires.registry import get_wire

F = TypeVar("F", bound=Callable[..., Any])
DEFAULTS = AgentSettings()

_OPTIONS = [
    click.option("--wire", type=click.Choice(WIRE_NAMES), required=True,
                 help="The provider's request format."),
    click.option("--model", required=True, help="The model name the provider knows."),
    click.option("--base-url", default=None,
                 help="The provider's address, if not its public one (a local server, a proxy)."),
    click.option("--mcp-config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 default=None, help="A JSON file with an `mcpServers` object: the tools' servers."),
    click.option("--mcp-start-timeout", type=click.FloatRange(min=0, min_open=True),
                 default=DEFAULTS.mcp_start_timeout, show_default=True,
                 help="Seconds an MCP server may take to start (a server's own `startTimeout` "
                      "wins)."),
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
            mcp_start_timeout=options["mcp_start_timeout"]),
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
    """Refuse to start without the wire's key, naming the variables to set — unless the provider
    is on this machine (a --base-url on a loopback address), where servers take no key."""
    from fuseforks.agent.agent import is_loopback

    names = get_wire(wire).key_envs
    if any(os.environ.get(name) for name in names) or is_loopback(base_url):
        return
    raise click.ClickException(
        f"no API key for {wire}: set {' or '.join(names)} "
        "(a --base-url on 127.0.0.1 or localhost needs none)")



