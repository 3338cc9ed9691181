"""`fuseforks clients SOURCE`: what the gateway did for each MCP client — the console's clients
pages in a terminal, read through the same read model (`fuseforks.projections.clients`)."""

from __future__ import annotations

import click
import msgspec

from fuseforks.cli.audit import Moment
from fuseforks.cli.sources import SOURCE, Location, open_source
from fuseforks.cli.tables import aligned
from fuseforks.projections.clients import (
    BYTE_SERIES,
    IMAGE_SERIES,
    KINDS,
    Tally,
    between,
    client_moments,
    timeline,
    totals,
)

COUNTS = (("sessions", "sessions"), ("results", "results"), *IMAGE_SERIES, *BYTE_SERIES)
"""Each column after the first: a `Tally` field and its title, the console's order."""


def table(first: str, rows: list[tuple[str, Tally]]) -> list[str]:
    return aligned([first, *(title for _, title in COUNTS)],
                   [[label, *(getattr(tally, field) for field, _ in COUNTS)]
                    for label, tally in rows])


@click.command(
    epilog="""\b
Examples:
  fuseforks clients gateway.db
  fuseforks clients gateway.db --client claude-code --since 7d
  fuseforks clients gateway.db --json""")
@click.argument("source", type=SOURCE)
@click.option("--client", default=None,
              help="One client, by the name it gave in initialize: its numbers by hour, or by "
                   "day over more than two days.")
@click.option("--since", type=Moment(), default=None,
              help="Only what happened at or after TIME (as `fuseforks audit --since`).")
@click.option("--until", type=Moment(), default=None,
              help="Only what happened before TIME (the same forms).")
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
def clients(source: Location, client: str | None, since: str | None, until: str | None,
            as_json: bool) -> None:
    """What the gateway did for each MCP client.

    For every client `fuseforks gateway` served in SOURCE (a store or a JSON Lines stream): its
    sessions and results, its images passed through, re-encoded, shrunk or dropped, and the
    bytes of its images from the servers against the bytes sent on — the console's clients
    pages. Bytes are whole bytes."""
    with open_source(source) as opened:
        moments = client_moments(opened.of_kinds(KINDS))
    if client is not None:
        moments = [m for m in moments if m.client == client]
        if not moments:
            raise click.ClickException(f"no gateway client {client!r} in {source}")
    moments = between(moments, since, until)
    if client is None:
        named = totals(moments)
        if as_json:
            click.echo(msgspec.json.encode(named).decode())
            return
        for line in table("client", list(named.items())) if named else ["no gateway client"]:
            click.echo(line)
        return
    shown = timeline(moments)
    if as_json:
        click.echo(msgspec.json.encode(shown).decode())
        return
    for line in table(shown.unit, [(b.start, b.tally) for b in shown.buckets]):
        click.echo(line)
