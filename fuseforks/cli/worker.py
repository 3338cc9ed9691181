"""`fuseforks worker`: run turns from the work queue (see `fuseforks.workers`)."""

from __future__ import annotations

import signal

import anyio
import click

from fuseforks.agent import AgentSettings
from fuseforks.cli.options import http_url, read_mcp_config
from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import WireName, parse_wire
from fuseforks.stores.urls import is_database_url, redact_url
from fuseforks.workers.settings import WorkerSettings
from fuseforks.workers.worker import Worker

DEFAULTS = WorkerSettings()


def parse_base_urls(values: tuple[str, ...]) -> dict[WireName, str]:
    found: dict[WireName, str] = {}
    for value in values:
        wire, sep, url = value.partition("=")
        if not sep or not url:
            raise click.BadParameter(f"{value!r} is not WIRE=URL", param_hint="--base-url")
        try:
            found[parse_wire(wire)] = url
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--base-url") from None
        http_url(url, hint="--base-url")
    return found


@click.command(epilog="""\b
Example:
  fuseforks worker --db postgresql://fuseforks@db/fuseforks --nats nats://bus:4222 \\
      --mcp-config mcp.json --concurrency 8 --base-url anthropic=https://gateway.internal""")
@click.option("--db", required=True, envvar="FUSEFORKS_DB", show_envvar=True,
              help="The PostgreSQL store every worker shares (URL).")
@click.option("--nats", "nats_url", required=True, envvar="FUSEFORKS_NATS", show_envvar=True,
              help="The NATS server with JetStream (URL).")
@click.option("--mcp-config", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The MCP servers this worker starts (mcpServers JSON).")
@click.option("--concurrency", type=click.IntRange(min=1), default=DEFAULTS.concurrency,
              show_default=True,
              help="Turns run at once.")
@click.option("--base-url", "base_urls", multiple=True, metavar="WIRE=URL",
              help="Where this worker sends a wire's requests (repeatable). Keys come from the "
                   "worker's environment; a request never names an endpoint or a key.")
@click.option("--name", default=None, help="This worker's name in the record (host and pid).")
@click.option("--grace", type=float, default=DEFAULTS.grace, show_default=True,
              help="Seconds running turns get to finish on SIGTERM before they are handed "
                   "back to the queue.")
@click.option("--max-agents", type=click.IntRange(min=1), default=DEFAULTS.max_agents,
              show_default=True,
              help="Agents (wire, model, agent name, language) kept open; the least recently "
                   "used idle ones are closed beyond this.")
@click.option("--max-rounds", type=click.IntRange(min=1), default=DEFAULTS.agents.max_rounds,
              show_default=True, help="Tool rounds before the closing summary call.")
@click.option("--image-cap", type=click.IntRange(min=0), default=DEFAULTS.agents.image_cap,
              show_default=True, help="Tool images one request may carry, the newest kept.")
@click.option("--allow-missing-servers", is_flag=True,
              default=DEFAULTS.agents.allow_missing_servers,
              help="Run turns even when an MCP server of --mcp-config did not start (without its "
                   "tools); by default such turns are recorded as not sent.")
def worker(db: str, nats_url: str, mcp_config: str | None, concurrency: int,
           base_urls: tuple[str, ...], name: str | None, grace: float, max_agents: int,
           max_rounds: int, image_cap: int, allow_missing_servers: bool) -> None:
    """Run turns from the work queue, recording them in a shared PostgreSQL store.

    A request is acknowledged when its turn has ended in the store; the turn of a worker that
    died is taken over from its record. SIGTERM or Ctrl-C: take no new request, let running
    turns finish (--grace), hand the rest back, exit 0."""
    servers = read_mcp_config(mcp_config)
    if not is_database_url(db):
        raise click.BadParameter(
            f"{redact_url(db)!r} is not a PostgreSQL URL (workers share one store)",
            param_hint="--db")
    settings = WorkerSettings(
        concurrency=concurrency, grace=grace, max_agents=max_agents,
        agents=AgentSettings(max_rounds=max_rounds, image_cap=image_cap,
                             allow_missing_servers=allow_missing_servers))
    running = Worker(db=db, nats=nats_url, mcp=servers, base_urls=parse_base_urls(base_urls),
                     name=name, settings=settings)

    async def main() -> FuseforksError | None:
        failed: FuseforksError | None = None
        async with anyio.create_task_group() as group:
            async def on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        running.stop()

            group.start_soon(on_signal)
            try:
                await running.run()
            except FuseforksError as error:  # said in one line below, outside the task group
                failed = error
            finally:
                group.cancel_scope.cancel()
        return failed

    failed = anyio.run(main)
    if failed is not None:
        raise click.ClickException(str(failed))
