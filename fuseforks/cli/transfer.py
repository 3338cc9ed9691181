"""`fuseforks export`, `fuseforks import` and `fuseforks copy`: move turns between stores (SQLite
files and PostgreSQL databases) and JSON Lines.

Import and copy are idempotent and all-or-nothing per turn: events the store already holds,
identical, are skipped; a turn whose stream has a gap, or whose events conflict with the store's
(same turn and seq, different content), is refused whole — nothing of it is written — while the
other turns are added. The report says which turns went which way, and the exit code is 1 when
any turn was refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fuseforks.cli.sources import (
    SOURCE,
    STORE,
    STREAM_SUFFIXES,
    Location,
    check_file_target,
    check_store_target,
    chosen_turns,
    is_store_file,
    open_source,
    warn,
)
from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.stores.jsonl import (
    TurnImport,
    group_turns,
    import_turn,
    import_turns,
    read_stream,
    write_stream,
)
from fuseforks.stores.open import open_store
from fuseforks.stores.urls import DatabaseUrl

DB_ENV = "FUSEFORKS_DB"
"""The store `--db` means when the option is not given."""


@click.command("export", epilog="""\b
Examples:
  fuseforks export fuseforks.db -o all.jsonl
  fuseforks export fuseforks.db --turn 3f2a > one-turn.jsonl
  fuseforks export postgresql://me@db.example.com/agents -o all.jsonl
  fuseforks export fuseforks.db --format otlp -o traces.pb
  fuseforks export fuseforks.db --format otlp-json -o traces.jsonl""")
@click.argument("source", type=SOURCE)
@click.option("--turn", "turn_id", default=None,
              help="Only this turn: its id or a unique prefix of it (default: every turn).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the stream to this file (replaced if it exists) instead of standard "
                   "output.")
@click.option("--format", "form", type=click.Choice(["jsonl", "otlp", "otlp-json"]),
              default="jsonl", show_default=True,
              help="jsonl: the events as recorded, what import reads; otlp: every turn's "
                   "OpenTelemetry spans as one OTLP protobuf ExportTraceServiceRequest, the body "
                   "collectors take at /v1/traces (application/x-protobuf); otlp-json: each "
                   "turn's spans, one OTLP/JSON ExportTraceServiceRequest per line (both need "
                   "fuseforks[otel]).")
def export(source: Location, turn_id: str | None, output: Path | None, form: str) -> None:
    """Write the turns of a store as a JSON Lines stream.

    One event per line, as recorded, from SOURCE (a store — an SQLite file or a PostgreSQL URL —
    read without writing to it, or a stream); `fuseforks import` reads it back. With --format
    otlp, every turn's OpenTelemetry GenAI spans as one OTLP protobuf request instead; with
    --format otlp-json, each turn's spans as one JSON document per line."""
    if output is not None:
        check_file_target(output, "output")
    with open_source(source) as opened:
        turns = chosen_turns(opened, turn_id)
    if form == "otlp-json":
        export_spans(list(turns.values()), output)
        return
    if form == "otlp":
        export_protobuf(list(turns.values()), output)
        return
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
Examples:
  fuseforks import all.jsonl --db archive.db
  fuseforks import all.jsonl --db postgresql://me@db.example.com/agents""")
@click.argument("stream", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--db", type=STORE, default="fuseforks.db", show_default=True, envvar=DB_ENV, show_envvar=True,
              help="The store to add the turns to: an SQLite file (created if missing) or a "
                   "PostgreSQL URL (postgresql://user:password@host/database); the "
                   "FUSEFORKS_DB environment variable sets it too.")
def import_(stream: Path, db: Location) -> None:
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
        turns = group_turns(read_stream(stream, on_cut=warn))
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    if not turns:
        click.echo(f"{stream}: no turns to import")
        return
    check_store_target(db)
    outcomes: list[TurnImport] = []
    try:
        with open_store(db) as store:
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


@click.command("copy", epilog="""\b
Examples:
  fuseforks copy fuseforks.db postgresql://me@db.example.com/agents
  fuseforks copy postgresql://me@db.example.com/agents archive.db""")
@click.argument("source", type=SOURCE)
@click.argument("destination", type=STORE)
def copy(source: Location, destination: Location) -> None:
    """Copy the turns of one store into another.

    Every turn of SOURCE (a store — an SQLite file or a PostgreSQL URL, read without writing to
    it — or a JSON Lines stream) goes into DESTINATION (an SQLite file, created if missing, or a
    PostgreSQL URL) whole or not at all, as `fuseforks import` adds them: events DESTINATION
    already holds, identical, are skipped, so copying again copies nothing and says so; a turn
    whose events differ from DESTINATION's at the same seq is refused and nothing of it is
    written. Prints one line per turn (copied, skipped or refused, and why) and exits 1 when any
    turn was refused."""
    if _same(source, destination):
        raise click.ClickException(
            f"{destination}: the source and the destination are the same store; nothing to copy")
    if isinstance(destination, Path) and destination.suffix.lower() in STREAM_SUFFIXES:
        raise click.UsageError(
            f"{destination} names a JSON Lines stream, and copy writes into a store (an SQLite "
            f"file or a PostgreSQL URL): write a stream with fuseforks export {source} -o "
            f"{destination}")
    check_store_target(destination)
    outcomes: list[TurnImport] = []
    with open_source(source) as opened:
        turn_ids = [info.turn_id for info in opened.turns()]
        if not turn_ids:
            click.echo(f"{source}: no turns to copy")
            return
        try:
            with open_store(destination) as store:
                for turn_id in turn_ids:  # one turn in memory at a time
                    outcome = import_turn(store, opened.read(turn_id))
                    outcomes.append(outcome)
                    click.echo(describe(outcome, "copied"))
        except FuseforksError as error:
            raise click.ClickException(
                f"{error} ({_count(len(outcomes), 'turn')} settled before it, as listed)"
            ) from error
    line = summary(destination, outcomes, "copied")
    if all(o.outcome == "skipped" for o in outcomes):
        line += "; nothing new to copy"
    click.echo(line)
    refused = [o for o in outcomes if o.outcome == "refused"]
    if refused:
        raise click.ClickException(
            f"{len(refused)} of {_count(len(outcomes), 'turn')} refused, nothing of them was "
            f"written: {', '.join(o.turn_id for o in refused)}")


def _same(source: Location, destination: Location) -> bool:
    if isinstance(source, DatabaseUrl) or isinstance(destination, DatabaseUrl):
        return source == destination
    try:
        return destination.exists() and source.samefile(destination)
    except OSError:
        return False


def describe(outcome: TurnImport, added: str = "imported") -> str:
    if outcome.outcome == "refused":
        return f"refused {outcome.turn_id}: {outcome.reason}"
    present = outcome.present
    if outcome.added is None:
        assert present is not None
        return (f"skipped {outcome.turn_id}: already in the store "
                f"(events {present[0]}-{present[1]}, identical)")
    line = f"{added} {outcome.turn_id}: events {outcome.added[0]}-{outcome.added[1]}"
    if present is not None:
        line += f" (events {present[0]}-{present[1]} were already there, identical)"
    return line


def summary(db: Location, outcomes: list[TurnImport], added: str = "imported") -> str:
    imported = [o for o in outcomes if o.outcome == "imported"]
    events = sum(o.added[1] - o.added[0] + 1 for o in imported if o.added is not None)
    skipped = sum(o.outcome == "skipped" for o in outcomes)
    refused = sum(o.outcome == "refused" for o in outcomes)
    return (f"{db}: {_count(len(imported), 'turn')} {added} ({_count(events, 'event')}), "
            f"{skipped} skipped (already there), {refused} refused")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def export_protobuf(turns: list[list[Envelope]], output: Path | None) -> None:
    """`export --format otlp`: one OTLP protobuf export request of every turn's spans."""
    from fuseforks.traces.recorded import otlp_protobuf

    if output is None and sys.stdout.isatty():
        raise click.UsageError("--format otlp writes binary protobuf: give -o FILE or redirect "
                               "standard output")
    try:
        body, spans = otlp_protobuf(turns)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    if output is None:
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
        return
    try:
        output.write_bytes(body)
    except OSError as error:
        raise click.ClickException(f"{output}: cannot write it ({error.strerror})") from error
    click.echo(f"exported {len(turns)} turn(s) as OTLP protobuf ({spans} spans, "
               f"{len(body):,} bytes) to {output}", err=True)


def export_spans(turns: list[list[Envelope]], output: Path | None) -> None:
    """`export --format otlp-json`: one OTLP/JSON line per turn (fuseforks.traces)."""
    from fuseforks.traces.recorded import otlp_json_lines

    try:
        lines = list(otlp_json_lines(turns))
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    text = "".join(line + "\n" for line in lines)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"{output}: cannot write it ({error.strerror})") from error
    spans = sum(line.count('"spanId"') for line in lines)
    click.echo(f"exported {len(lines)} turn(s) as OTLP/JSON ({spans} spans) to {output}", err=True)
