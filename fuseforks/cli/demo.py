"""`fuseforks demo`: the offline main job (what `make demo` runs)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fuseforks.cli.sources import STORE, Location, check_file_target, check_store_target
from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import LANGUAGES, Language

if TYPE_CHECKING:
    from fuseforks.demo.offline import ScenarioOutcome


def _cell(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(outcomes: list[ScenarioOutcome]) -> None:
    header = (f"{'scenario':<16} {'wire':<21} {'model':<32} {'placement':<10} "
              f"{'images':<26}  model said")
    click.echo(header)
    click.echo("-" * len(header) + "-" * 40)
    for o in outcomes:
        said = o.result.answer or f"(no answer: {o.result.error or o.result.stop})"
        click.echo(
            f"{o.scenario.name:<16} {o.scenario.wire:<21} {_cell(o.scenario.model, 32):<32} "
            f"{o.placement:<10} {o.images:<26}  {said}"
        )
    for o in outcomes:
        click.echo(f"\n[{o.scenario.name}] turn {o.result.turn_id}")
        click.echo(f"  camera frame: {o.truth}")
        for line in o.log_lines:
            click.echo(f"  {line}")
        for display in o.displays:
            click.echo("  display: " + display.replace("\n", "\n           "))


@click.command(epilog="""\b
Example:
  fuseforks demo --language ja --db /tmp/demo.db --log /tmp/demo.log""")
@click.option("--db", "db_path", default="fuseforks.db", show_default=True, type=STORE,
              envvar="FUSEFORKS_DB", show_envvar=True,
              help="The store the demo turns are recorded into: an SQLite file (created if "
                   "missing) or a PostgreSQL URL; the FUSEFORKS_DB environment variable sets it "
                   "too.")
@click.option("--log", "log_path", default="fuseforks.log", show_default=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="The log file the demo turns' lines are appended to.")
@click.option("--record-requests", "record_dir", default=None, metavar="DIR",
              type=click.Path(file_okay=False, path_type=Path),
              help="Have the simulator write every request body it receives to DIR.")
@click.option("--language", type=click.Choice(LANGUAGES), default="en", show_default=True,
              help="The language of every sentence fuseforks adds for the model.")
def demo(db_path: Location, log_path: Path, record_dir: Path | None, language: Language) -> None:
    """Run the offline demo: every provider wire and an image-refusing model.

    Starts the provider simulator (a local process on 127.0.0.1) and the demo camera (an MCP
    server over stdio), runs one camera turn on each of the seven provider wires plus one with a
    model that refuses images, one on each cloud's wire (Bedrock, Vertex AI, Azure OpenAI) and
    on each local server by name (Ollama, vLLM, llama.cpp, LM Studio), and prints where each
    image went and what each model said it saw next to the camera's truth. Nothing leaves the
    machine."""
    check_store_target(db_path)
    check_file_target(log_path, "log")
    from fuseforks.demo.offline import run  # the demo's engine, simulator and MCP SDK: only now

    click.echo("fuseforks demo: the provider simulator (a local process on 127.0.0.1) and the demo")
    click.echo(f"camera (an MCP server over stdio); turns are recorded into {db_path} and {log_path}.\n")
    try:
        outcomes = run(db_path, log_path, record_dir, language)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    print_table(outcomes)
    click.echo(next_steps(db_path))


def next_steps(db_path: Location) -> str:
    """What to try after the demo, on the store it wrote (its name quoted for the shell)."""
    from fuseforks.console.server import DEFAULT_PORT

    db = shlex.quote(str(db_path))
    steps = [(f"fuseforks turns {db}", "one line per turn"),
             (f"fuseforks audit {db}", "which image went where, and what became of it"),
             (f"fuseforks replay {db} --verify", "every turn replayed and checked"),
             (f"fuseforks console {db}",
              f"the same in a browser, at http://127.0.0.1:{DEFAULT_PORT}/")]
    width = max(len(command) for command, _ in steps)
    return "\nNext, look at what was recorded:\n" + "\n".join(
        f"  {command:<{width}}  # {what}" for command, what in steps)
