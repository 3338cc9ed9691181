"""`fuseforks demo`: the offline main job (what `make demo` runs)."""

from __future__ import annotations

from pathlib import Path

import click

from fuseforks.core.names import LANGUAGES, Language
from fuseforks.demo.offline import ScenarioOutcome, run


def _cell(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(outcomes: list[ScenarioOutcome]) -> None:
    header = f"{'scenario':<16} {'wire':<21} {'model':<32} {'placement':<10} {'images':>6}  model said"
    click.echo(header)
    click.echo("-" * len(header) + "-" * 40)
    for o in outcomes:
        said = o.result.answer or f"(no answer: {o.result.error or o.result.stop})"
        click.echo(
            f"{o.scenario.name:<16} {o.scenario.wire:<21} {_cell(o.scenario.model, 32):<32} "
            f"{o.placement:<10} {o.images_sent:>6}  {said}"
        )
    for o in outcomes:
        click.echo(f"\n[{o.scenario.name}] turn {o.result.turn_id}")
        click.echo(f"  camera frame: {o.truth}")
        for line in o.log_lines:
            click.echo(f"  {line}")
        for display in o.displays:
            click.echo("  display: " + display.replace("\n", "\n           "))


@click.command()
@click.option("--db", "db_path", default="fuseforks.db", show_default=True,
              type=click.Path(dir_okay=False, path_type=Path))
@click.option("--log", "log_path", default="fuseforks.log", show_default=True,
              type=click.Path(dir_okay=False, path_type=Path))
@click.option("--record-requests", "record_dir", default=None,
              type=click.Path(file_okay=False, path_type=Path),
              help="Have the simulator write every request body it receives to DIR.")
@click.option("--language", type=click.Choice(LANGUAGES), default="en", show_default=True)
def demo(db_path: Path, log_path: Path, record_dir: Path | None, language: Language) -> None:
    """Run the demo scenarios offline: seven wires plus an image-refusing model."""
    click.echo("fuseforks demo: the provider simulator (a local process on 127.0.0.1) and the demo")
    click.echo(f"camera (an MCP server over stdio); turns are recorded into {db_path} and {log_path}.\n")
    outcomes = run(db_path, log_path, record_dir, language)
    print_table(outcomes)
