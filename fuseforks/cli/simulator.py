"""`fuseforks simulator`: run the provider simulator as a real server until interrupted.

It prints one line, `simulator: listening on http://127.0.0.1:PORT`, once the socket is bound,
so a parent process started with `--port 0` can read the port; then one line per wire base URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import click

from fuseforks.simulator import Script, Simulator


async def _serve(port: int, record_dir: Path | None, script: Script) -> None:
    simulator = Simulator(script=script, record_dir=record_dir)
    await simulator.start(port=port)
    click.echo(f"simulator: listening on {simulator.base_url}")
    for wire, url in simulator.base_urls.items():
        click.echo(f"simulator: {wire} {url}")
    sys.stdout.flush()
    try:
        await simulator.serve_forever()
    finally:
        await simulator.stop()


@click.command()
@click.option("--port", type=int, default=0, show_default=True, help="0 picks a free port.")
@click.option("--record-requests", "record_dir", type=click.Path(path_type=Path), default=None,
              help="Write every request body to DIR/<seq>-<wire>.json.")
@click.option("--call", "call_tools", multiple=True,
              help="Tool the model calls on its first round (repeatable; default: the first declared).")
@click.option("--rounds", type=int, default=1, show_default=True,
              help="Tool rounds before the model answers.")
@click.option("--latency", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds the model takes before each answer.")
def simulator(port: int, record_dir: Path | None, call_tools: tuple[str, ...], rounds: int,
              latency: float) -> None:
    """Serve all seven provider wires on 127.0.0.1: strict, scripted, and able to see images."""
    script = Script(call_tools=call_tools, rounds=rounds, latency=latency)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(port, record_dir, script))
