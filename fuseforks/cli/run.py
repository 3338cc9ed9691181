"""`fuseforks run`: one live turn against a real provider and real MCP servers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import click

from fuseforks.bus.bus import Bus, SubscriberFailure
from fuseforks.bus.subscribers import LogWriter, StoreWriter
from fuseforks.cli.signals import Interrupts
from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.errors import RecordingFailed
from fuseforks.core.names import DEFAULT_MAX_ROUNDS, LANGUAGES, Language, WireName
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.images.vault import ImageVault
from fuseforks.live import HubTools, LiveModel
from fuseforks.mcp import ToolHub
from fuseforks.mcp.config import ConfigError, load_config
from fuseforks.ports.model import ModelNotes
from fuseforks.ports.tools import ToolOutput
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.wires.registry import WIRES, endpoint_from_env


def _progress(text: str) -> None:
    click.echo(f"… {text}", err=True)


class _ProgressModel:
    """Says on stderr what the turn is waiting for, so a slow provider is not a silent one."""

    def __init__(self, inner: LiveModel) -> None:
        self.inner = inner
        self.wire, self.model = inner.wire, inner.model
        self.endpoint_host, self.placement = inner.endpoint_host, inner.placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes) -> ChatResponse:
        _progress(f"waiting on {self.wire} ({self.model} at {self.endpoint_host})")
        return await self.inner.chat(request, vault, notes)


class _ProgressTools(HubTools):
    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        _progress(f"calling tool {name}")
        return await super().call(name, arguments, language)


async def _run(wire: WireName, model: str, base_url: str | None, mcp_config: Path | None,
               language: Language, db: Path, log_file: Path, request: str, agent: str,
               max_rounds: int) -> int:
    endpoint = endpoint_from_env(wire, base_url)
    if not endpoint.api_key:
        raise click.ClickException(f"no API key for {wire}: set one of its environment variables")
    servers = load_config(mcp_config) if mcp_config else []
    file_log = LogWriter.to_file(log_file)
    echo_log = LogWriter(click.echo)
    live = LiveModel(wire, model, endpoint)
    interrupts = Interrupts()
    result = None
    try:
        with SqliteStore(db) as store:
            async with interrupts.watching():
                with interrupts.scope:
                    async with ToolHub(servers) as hub, Bus(
                        [file_log, echo_log], required=[StoreWriter(store)],
                        on_failure=_report_failure,
                    ) as bus:
                        for server, reason in hub.start_faults.items():
                            _progress(f"MCP server {server} did not start: {reason}")
                        spec = TurnSpec(agent=agent, request=request, language=language,
                                        max_rounds=max_rounds)
                        turn = Turn(spec, _ProgressModel(live), _ProgressTools(hub),
                                    publish=bus.publish)
                        interrupts.attach(turn)
                        result = await turn.run()
                        interrupts.detach()
    except* RecordingFailed as group:
        raise click.ClickException(
            f"the turn stopped: the record could not be written ({first_leaf(group)}); "
            "what was recorded before is kept") from None
    finally:
        await live.aclose()
        file_log.close()
    if result is None or result.stop == "interrupted":
        click.echo(f"turn interrupted ({interrupts.cause or 'cancelled'})", err=True)
        return interrupts.exit_code or 1
    if result.answer:
        click.echo(f"\n{result.answer}")
    if result.error:
        click.echo(f"turn failed: {result.error}", err=True)
        return 1
    return 0


def first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def _report_failure(failure: SubscriberFailure) -> None:
    click.echo(f"fuseforks: {failure.subscriber} stopped: {failure.error} (the turn goes on)",
               err=True)


@click.command()
@click.option("--wire", type=click.Choice(WIRES), required=True)
@click.option("--model", required=True)
@click.option("--base-url", default=None, help="Override the provider's base URL.")
@click.option("--mcp-config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="An `mcpServers` JSON file.")
@click.option("--language", type=click.Choice(LANGUAGES), default="en", show_default=True)
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default="fuseforks.db",
              show_default=True)
@click.option("--log", "log_file", type=click.Path(dir_okay=False, path_type=Path),
              default="fuseforks.log", show_default=True)
@click.option("--agent", default="agent", show_default=True)
@click.option("--max-rounds", type=int, default=DEFAULT_MAX_ROUNDS, show_default=True)
@click.argument("request")
def run(wire: WireName, model: str, base_url: str | None, mcp_config: Path | None, language: Language,
        db: Path, log_file: Path, agent: str, max_rounds: int, request: str) -> None:
    """Run one turn of REQUEST against a real provider (key from the environment)."""
    try:
        code = anyio.run(_run, wire, model, base_url, mcp_config, language, db, log_file,
                         request, agent, max_rounds)
    except ConfigError as error:
        raise click.ClickException(str(error)) from error
    sys.exit(code)
