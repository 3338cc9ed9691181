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


async def _serve(port: int, record_dir: Path | None, script: Script, require_key: bool,
                 any_model: bool) -> None:
    simulator = Simulator(script=script, record_dir=record_dir, require_key=require_key,
                          any_model=any_model)
    await simulator.start(port=port)
    click.echo(f"simulator: listening on {simulator.base_url}")
    for wire, url in simulator.base_urls.items():
        click.echo(f"simulator: {wire} {url}")
    sys.stdout.flush()
    try:
        await simulator.serve_forever()
    finally:
        await simulator.stop()


@click.command(epilog="""\b
Example:
  fuseforks simulator --port 8400 --call nik__live_view_image
  (then: fuseforks run --wire gemini --model gemini-3.8-flash \\
           --base-url http://127.0.0.1:8400/gemini/v1beta ...)""")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port on 127.0.0.1; 0 picks a free one.")
@click.option("--record-requests", "record_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR", help="Write every request body to DIR/<seq>-<wire>.json.")
@click.option("--call", "call_tools", multiple=True,
              help="Tool the model calls on its first round (repeatable; default: the first declared).")
@click.option("--rounds", type=click.IntRange(min=0), default=1, show_default=True,
              help="Tool rounds before the model answers.")
@click.option("--latency", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds the model takes before each answer.")
@click.option("--require-key", is_flag=True,
              help="Answer a request without a key with the provider's 401, as the real service "
                   "does (by default, like any server on this machine, it needs none).")
@click.option("--any-model", is_flag=True,
              help="Answer any model name (by default a name the wire does not know gets the "
                   "provider's own \"model not found\", as from the real service).")
def simulator(port: int, record_dir: Path | None, call_tools: tuple[str, ...], rounds: int,
              latency: float, require_key: bool, any_model: bool) -> None:
    """Serve every provider wire on 127.0.0.1 (tests, the demo).

    A strict local stand-in for the providers, until interrupted: it checks every request
    against its wire's format and its model against the names the wire knows (the README lists
    them; --any-model takes any), answers from a script (call a tool, then describe the images it
    received), and can refuse images like some real models. Like any server on this machine it
    takes requests without a key (fuseforks sends none to 127.0.0.1 when the wire's variable is
    unset); --require-key makes it refuse them as the providers do. The first line it prints is
    `simulator: listening on http://127.0.0.1:PORT`, then one base URL per wire."""
    script = Script(call_tools=call_tools, rounds=rounds, latency=latency)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(port, record_dir, script, require_key, any_model))
    except OSError as error:
        where = error.filename or f"127.0.0.1:{port}"
        raise click.ClickException(f"simulator: {error.strerror or error} ({where})") from error
