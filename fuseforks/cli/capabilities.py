"""`fuseforks capabilities SOURCE`: where each model took tool images, and where it refused them."""

from __future__ import annotations

import click
import msgspec

from fuseforks.cli.sources import SOURCE, Location, open_source
from fuseforks.cli.tables import of_fields
from fuseforks.projections.capabilities import Capability, capabilities

_COLUMNS = (("wire", "wire"), ("model", "model"), ("endpoint", "endpoint_host"),
            ("placement", "placement"), ("last received", "last_received"),
            ("last refused", "last_refused"))


def table(rows: list[Capability]) -> list[str]:
    return of_fields(_COLUMNS, rows)


@click.command(epilog="""\b
Examples:
  fuseforks capabilities fuseforks.db
  fuseforks capabilities exported.jsonl --json""")
@click.argument("source", type=SOURCE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list, one object per row.")
def capabilities_command(source: Location, as_json: bool) -> None:
    """Show where each model took tool images, learned from recorded turns.

    One line per wire, model, endpoint and placement in SOURCE: when tool images in that
    placement were last received and last refused. An agent starts a turn with the placement
    known to work, and tries the native one again once its refusal is a week old."""
    with open_source(source) as opened:
        envelopes = list(opened.everything())
    rows = capabilities(sorted(envelopes, key=lambda e: (e.at, e.turn_id, e.seq)))
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
    elif not rows:
        click.echo(f"nothing learned yet in {source}: no request with tool images was answered "
                   "or refused")
    else:
        for line in table(rows):
            click.echo(line)
