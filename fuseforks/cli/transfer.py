"""`fuseforks export` and `fuseforks import`: move turns between stores and JSON Lines.

Import is idempotent and all-or-nothing per turn: events the store already holds, identical, are
skipped; a turn whose stream has a gap, or whose events conflict with the store's (same turn and
seq, different content), is refused whole — nothing of it is written — while the other turns of
the stream are imported. The report says which turns went which way, and the exit code is 1 when
any turn was refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fuseforks.cli.sources import (
    check_file_target,
    check_store_target,
    is_store_file,
    open_source,
)
from fuseforks.core.errors import FuseforksError
from fuseforks.stores.jsonl import TurnImport, group_turns, import_turns, read_stream, write_stream
from fuseforks.stores.sqlite import SqliteStore


@click.command("export", epilog="""\b
Examples:
  fuseforks export fuseforks.db -o all.jsonl
  fuseforks export fuseforks.db --turn 3f2a > one-turn.jsonl""")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--turn", "turn_id", default=None,
              help="Only this turn: its id or a unique prefix of it (default: every turn).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the stream to this file (replaced if it exists) instead of standard "
                   "output.")
def export(source: Path, turn_id: str | None, output: Path | None) -> None:
    """Write the turns of a store as a JSON Lines stream.

    One event per line, as recorded, from SOURCE (a store, read without writing to it, or a
    stream); `fuseforks import` reads it back."""
    if output is not None:
        check_file_target(output, "output")
    with open_source(source) as opened:
        turns = opened.turns(turn_id)
    envelopes = [e for events in turns.values() for e in events]
    if output is None:
        write_stream(envelopes, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    try:
        with open(output, "wb") as out:
            write_stream(envelopes, out)
    except OSError as error:
        raise click.ClickException(f"{output}: cannot write it ({error.strerror})") from error
    click.echo(f"exported {len(envelopes)} events of {len(turns)} turn(s) to {output}", err=True)


@click.command("import", epilog="""\b
Example:
  fuseforks import all.jsonl --db archive.db""")
@click.argument("stream", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default="fuseforks.db",
              show_default=True, help="The store to add the turns to (created if missing).")
def import_(stream: Path, db: Path) -> None:
    """Add the turns of a JSON Lines stream to a store.

    Each turn of STREAM goes in whole or not at all. Events the store already holds, identical,
    are skipped, so importing a stream twice changes nothing; a turn with a gap in the stream, or
    with an event that differs from the store's at the same seq, is refused and nothing of it is
    written. Prints one line per turn (imported, skipped or refused, and why) and exits 1 when any
    turn was refused."""
    if is_store_file(stream):
        raise click.ClickException(
            f"{stream}: an SQLite store, not a JSON Lines stream; to copy its turns, export them "
            f"first: fuseforks export {stream} -o turns.jsonl")
    try:
        turns = group_turns(read_stream(stream))
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    if not turns:
        click.echo(f"{stream}: no turns to import")
        return
    check_store_target(db)
    outcomes: list[TurnImport] = []
    try:
        with SqliteStore(db) as store:
            for outcome in import_turns(store, (e for events in turns.values() for e in events)):
                outcomes.append(outcome)
                click.echo(describe(outcome))
    except FuseforksError as error:
        raise click.ClickException(
            f"{error} ({_count(len(outcomes), 'turn')} settled before it, as listed)") from error
    click.echo(summary(db, outcomes))
    refused = [o for o in outcomes if o.outcome == "refused"]
    if refused:
        raise click.ClickException(
            f"{len(refused)} of {_count(len(outcomes), 'turn')} refused, nothing of them was "
            f"written: {', '.join(o.turn_id for o in refused)}")


def describe(outcome: TurnImport) -> str:
    if outcome.outcome == "refused":
        return f"refused {outcome.turn_id}: {outcome.reason}"
    present = outcome.present
    if outcome.added is None:
        assert present is not None
        return (f"skipped {outcome.turn_id}: already in the store "
                f"(events {present[0]}-{present[1]}, identical)")
    line = f"imported {outcome.turn_id}: events {outcome.added[0]}-{outcome.added[1]}"
    if present is not None:
        line += f" (events {present[0]}-{present[1]} were already there, identical)"
    return line


def summary(db: Path, outcomes: list[TurnImport]) -> str:
    imported = [o for o in outcomes if o.outcome == "imported"]
    events = sum(o.added[1] - o.added[0] + 1 for o in imported if o.added is not None)
    skipped = sum(o.outcome == "skipped" for o in outcomes)
    refused = sum(o.outcome == "refused" for o in outcomes)
    return (f"{db}: {_count(len(imported), 'turn')} imported ({_count(events, 'event')}), "
            f"{skipped} skipped (already there), {refused} refused")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
