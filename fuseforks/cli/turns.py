"""`fuseforks turns SOURCE`: the recorded turns, one line each."""

from __future__ import annotations

import click
import msgspec

from fuseforks.cli.sources import SOURCE, Location, open_source
from fuseforks.cli.tables import aligned
from fuseforks.projections.summary import TurnSummary
from fuseforks.projections.words import images_shown

_HEADER = ("turn", "agent", "wire", "model", "started", "rounds", "stop", "images sent",
           "taken over")


def table(rows: list[TurnSummary]) -> list[str]:
    """The turns as a table; a turn whose images were refused or stripped says so beside its
    count of images sent (`images_shown`)."""
    return aligned(_HEADER, [[s.turn_id, s.agent, s.wire, s.model, s.started, s.rounds, s.stop,
                              s.images_sent if not (s.refusals or s.stripped
                                                    or s.images_received < s.images_sent)
                              else images_shown(s), s.taken_over] for s in rows])


@click.command(epilog="""\b
Examples:
  fuseforks turns fuseforks.db
  fuseforks turns exported.jsonl --json""")
@click.argument("source", type=SOURCE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list, one object per turn.")
def turns(source: Location, as_json: bool) -> None:
    """List the recorded turns of a store or stream.

    One line per turn in SOURCE, oldest first: its id, agent, wire, model, when it started, its
    tool rounds, how it stopped (`cut` when the record has no end), how many tool images its
    requests sent (and, when not all reached the model, what became of them: refused, stripped),
    and how many times another worker took it over. Any unique prefix of an id works wherever a command takes --turn."""
    with open_source(source) as opened:
        rows = opened.summaries()
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
    elif not rows:
        click.echo(f"no turns in {source}")
    else:
        for line in table(rows):
            click.echo(line)
