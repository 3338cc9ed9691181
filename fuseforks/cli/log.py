"""`fuseforks log SOURCE`: print the `fuseforks.log` projection of recorded turns."""

from __future__ import annotations

import click

from fuseforks.cli.sources import SOURCE, Location, load_turns
from fuseforks.projections.log import turn_log


@click.command(epilog="""\b
Example:
  fuseforks log fuseforks.db --turn 3f2a""")
@click.argument("source", type=SOURCE)
@click.option("--turn", "turn_id", default=None,
              help="Only this turn: its id or a unique prefix of it.")
def log(source: Location, turn_id: str | None) -> None:
    """Print the log lines of recorded turns.

    The lines `fuseforks.log` holds for every turn in SOURCE (a store or a JSON Lines stream),
    folded again from the recorded events."""
    for envelopes in load_turns(source, turn_id).values():
        for text in turn_log(envelopes):
            click.echo(text)
