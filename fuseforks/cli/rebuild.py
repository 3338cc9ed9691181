"""`fuseforks rebuild STORE`: the read model built again from the store's events."""

from __future__ import annotations

import time

import click

from fuseforks.cli.sources import STORE, Location, check_store_target
from fuseforks.core.errors import FuseforksError
from fuseforks.stores.open import inspect_store, open_store


@click.command(epilog="""\b
Examples:
  fuseforks rebuild fuseforks.db
  fuseforks rebuild postgresql://me@db.example.com/agents""")
@click.argument("store", type=STORE)
def rebuild(store: Location) -> None:
    """Build the read model of STORE again from its events.

    The rows the audit, `turns` and the console read (each image delivery and its outcome, each
    turn's summary) are written with the events and built again by themselves when a newer
    fuseforks changes how they are folded. This does it on demand: after events were put into the
    store by other means than fuseforks, or to check a store. Appends wait while it runs. No
    event is changed."""
    check_store_target(store)
    try:
        if not inspect_store(store):
            raise click.ClickException(f"{store}: no store there; nothing was changed")
        started = time.monotonic()
        with open_store(store) as opened:
            turns = opened.rebuild_rows()
    except FuseforksError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{store}: the read model of {turns} turn{'' if turns == 1 else 's'} built again "
               f"from its events in {time.monotonic() - started:.1f} s")
