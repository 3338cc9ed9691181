"""`fuseforks turns SOURCE`: the recorded turns, one line each."""

from __future__ import annotations

import click
import msgspec

from fuseforks.cli.sources import SOURCE, Location, chosen_turns, open_source
from fuseforks.cli.tables import of_fields
from fuseforks.projections.summary import TurnSummary, turn_summary

_COLUMNS = (("turn", "turn_id"), ("agent", "agent"), ("wire", "wire"), ("model", "model"),
            ("started", "started"), ("rounds", "rounds"), ("stop", "stop"),
            ("images sent", "images_sent"), ("taken over", "taken_over"))


def table(rows: list[TurnSummary]) -> list[str]:
    return of_fields(_COLUMNS, rows)


@click.command(epilog="""\b
Examples:
  fuseforks turns fuseforks.db
  fuseforks turns exported.jsonl --json""")
@click.argument("source", type=SOURCE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list, one object per turn.")
def turns(source: Location, as_json: bool) -> None:
    """List the recorded turns of a store or stream.

    One line per turn in SOURCE, oldest first: its id, agent, wire, model, when it started, its
    tool rounds, how it stopped (`cut` when the record has no end), how many distinct tool
    images its requests sent, and how many times another worker took it over. Any unique prefix of an id works wherever a command takes --turn."""
    with open_source(source) as opened:
        rows = [turn_summary(envelopes) for envelopes in chosen_turns(opened).values() if envelopes]
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
    elif not rows:
        click.echo(f"no turns in {source}")
    else:
        for line in table(rows):
            click.echo(line)
