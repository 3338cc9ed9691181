"""`fuseforks demo`: the offline main job."""

from __future__ import annotations

import uuid
from pathlib import Path

import click

from fuseforks.cli.synthetic import synthetic_turn_rounds
from fuseforks.events.sequencer import Sequencer, SystemClock
from fuseforks.events.sqlite_store import SqliteStore
from fuseforks.projections import LogState, evolve_log, fold


@click.command()
@click.option("--db", "db_path", default="fuseforks.db", show_default=True, type=click.Path(path_type=Path))
def demo(db_path: Path) -> None:
    """Record a synthetic camera turn into the store and print its log projection."""
    turn_id = f"demo-{uuid.uuid4().hex[:12]}"
    sequencer = Sequencer(turn_id, SystemClock())
    with SqliteStore(db_path) as store:
        for round_events in synthetic_turn_rounds():
            store.append(sequencer.seal(round_events))
        recorded = store.read(turn_id)
    click.echo(f"recorded turn {turn_id}: {len(recorded)} events into {db_path}")
    for text in fold(evolve_log, LogState(), recorded).lines:
        click.echo(text)
