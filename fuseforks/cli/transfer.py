"""`fuseforks export` and `fuseforks import`: move turns between stores and JSON Lines."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fuseforks.core.errors import FuseforksError
from fuseforks.stores.jsonl import import_stream, write_stream
from fuseforks.stores.sqlite import SqliteStore


@click.command("export")
@click.argument("store", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--turn", "turn_id", default=None, help="Only this turn (default: every turn).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here instead of standard output.")
def export(store: Path, turn_id: str | None, output: Path | None) -> None:
    """Write turns of STORE as JSON Lines, one envelope per line."""
    try:
        with SqliteStore(store) as source:
            ids = [turn_id] if turn_id else [t.turn_id for t in source.turns()]
            envelopes = [e for i in ids for e in source.read(i)]
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    if turn_id and not envelopes:
        raise click.ClickException(f"{store}: no turn {turn_id!r}")
    if output is None:
        write_stream(envelopes, sys.stdout.buffer)
    else:
        with open(output, "wb") as out:
            write_stream(envelopes, out)
        click.echo(f"exported {len(envelopes)} events of {len(ids)} turn(s) to {output}", err=True)


@click.command("import")
@click.argument("stream", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default="fuseforks.db",
              show_default=True)
def import_(stream: Path, db: Path) -> None:
    """Append the turns of a JSON Lines STREAM to a store (each turn in one transaction)."""
    try:
        with SqliteStore(db) as store:
            counts = import_stream(store, stream)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    for turn_id, count in counts.items():
        click.echo(f"imported {turn_id}: {count} events")
