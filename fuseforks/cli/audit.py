"""`fuseforks audit SOURCE`: which images went to which provider, from which tool."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import click
import msgspec

from fuseforks.cli.sources import SQLITE_MAGIC, load_turns
from fuseforks.core.errors import FuseforksError
from fuseforks.projections.audit import AuditRows, DeliveryRow, audit_rows
from fuseforks.stores.sqlite import SqliteStore


def from_store(path: Path, digest: str | None, wire: str | None, model: str | None,
               tool: str | None, since: str | None) -> AuditRows:
    with SqliteStore(path) as store:
        return AuditRows(
            origins=store.image_origins(digest) if digest else [],
            deliveries=store.image_deliveries(digest=digest, wire=wire, model=model, tool=tool,
                                              since=since),
        )


def from_stream(path: Path, digest: str | None, wire: str | None, model: str | None,
                tool: str | None, since: str | None) -> AuditRows:
    rows = audit_rows(e for turn in load_turns(path).values() for e in turn)

    def keep(row: DeliveryRow) -> bool:
        return ((digest is None or row.digest == digest) and (wire is None or row.wire == wire)
                and (model is None or row.model == model) and (tool is None or row.tool == tool)
                and (since is None or row.at >= since))

    return AuditRows(
        origins=[o for o in rows.origins if digest is not None and o.digest == digest],
        deliveries=sorted((d for d in rows.deliveries if keep(d)),
                          key=lambda d: (d.at, d.turn_id, d.request_seq)),
    )


def as_csv(rows: list[DeliveryRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(DeliveryRow.__struct_fields__)
    for row in rows:
        writer.writerow(msgspec.structs.astuple(row))
    return out.getvalue()


_TURN_NOTES = {"cut": " (turn cut: no end recorded)", "interrupted": " (turn interrupted)"}


def print_text(rows: AuditRows) -> None:
    for origin in rows.origins:
        click.echo(f"origin {origin.digest}: tool {origin.tool} (server {origin.server or '-'}) "
                   f"round {origin.round} of turn {origin.turn_id} at {origin.at}; "
                   f"{origin.source_format} -> {origin.media_type} {origin.path} "
                   f"{origin.width}x{origin.height} {origin.size} B")
    for row in rows.deliveries:
        click.echo(f"{row.at} {row.digest} {row.tool} -> {row.wire} {row.model} "
                   f"host={row.endpoint_host} {row.placement} round={row.round} {row.purpose} "
                   f"{row.outcome}{' stripped' if row.stripped else ''} turn={row.turn_id}"
                   f"{_TURN_NOTES.get(row.turn_stop, '')}")
    if not rows.deliveries and not rows.origins:
        click.echo("no image matches")


@click.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--digest", default=None, help="SHA-256 of an image (as sent).")
@click.option("--provider", "wire", default=None, help="A wire name, e.g. anthropic.")
@click.option("--model", default=None)
@click.option("--tool", default=None, help="A prefixed tool name, e.g. nik__live_view_image.")
@click.option("--since", default=None, help="ISO-8601 time, e.g. 2026-11-30T00:00:00Z.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--csv", "as_csv_flag", is_flag=True)
def audit(source: Path, digest: str | None, wire: str | None, model: str | None,
          tool: str | None, since: str | None, as_json: bool, as_csv_flag: bool) -> None:
    """Every delivery of a tool image: to which wire, model and host, natively or by alternate,
    received, refused or stripped — and, for a digest, the tool that produced it."""
    try:
        with open(source, "rb") as handle:
            is_store = handle.read(16) == SQLITE_MAGIC
        reader = from_store if is_store else from_stream
        rows = reader(source, digest, wire, model, tool, since)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
    elif as_csv_flag:
        click.echo(as_csv(rows.deliveries), nl=False)
    else:
        print_text(rows)



