"""`fuseforks audit SOURCE`: which images went to which provider (or gateway client), from which
tool."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, get_args

import click
import msgspec

from fuseforks.cli.sources import SOURCE, Location, open_source, resolve_digest
from fuseforks.core.names import WIRE_NAMES
from fuseforks.projections.audit import (
    AuditFilter,
    AuditRows,
    ClientDeliveryRow,
    csv_text,
    digest_prefix,
    moment_key,
)
from fuseforks.projections.deliveries import Outcome


class Moment(click.ParamType):
    """A moment: ISO-8601 with any offset (UTC without one), or a duration meaning that long ago.
    Converted to the form recorded times are compared in (`since_key`)."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return moment_key(str(value), datetime.now(UTC))
        except ValueError as error:
            self.fail(str(error), param, ctx)


class DigestPrefix(click.ParamType):
    """The SHA-256 of an image, or its first 4 hex characters or more, in any case."""

    name = "HEX"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return digest_prefix(str(value))
        except ValueError as error:
            self.fail(str(error), param, ctx)


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
    for sent in rows.client_deliveries:
        click.echo(f"{sent.at} {sent.digest} {sent.tool} -> client {sent.client} "
                   f"{sent.client_version or '-'} (server {sent.server or '-'}) call={sent.call} "
                   f"session={sent.session_id}")
    if not rows.deliveries and not rows.origins and not rows.client_deliveries:
        click.echo("no image matches")


@click.command(
    epilog="""\b
Examples:
  fuseforks audit fuseforks.db --digest 3fa2 --since 2h
  fuseforks audit fuseforks.db --provider openai-compat --csv
  fuseforks audit gateway.db --client claude-code""")
@click.argument("source", type=SOURCE)
@click.option("--digest", type=DigestPrefix(), default=None,
              help="Only this image: its SHA-256 as sent, or a unique prefix of 4 hex characters "
                   "or more, in any case; also shows the tool that produced it.")
@click.option("--provider", "wire", type=click.Choice(WIRE_NAMES), default=None,
              help="Only requests on this provider wire.")
@click.option("--model", default=None, help="Only requests to this model, e.g. claude-sonnet-5-5.")
@click.option("--client", default=None,
              help="Only images `fuseforks gateway` sent to this MCP client, named as it "
                   "introduced itself (its name from initialize), e.g. claude-code.")
@click.option("--tool", default=None,
              help="Only images from this tool, named as the model saw it (server__tool), e.g. "
                   "nik__live_view_image.")
@click.option("--since", type=Moment(), default=None,
              help="Only requests at or after TIME: ISO-8601 with any offset (UTC without one), "
                   "e.g. 2026-11-30T08:48:54Z or 2026-11-30T09:48+01:00, or a duration back from "
                   "now: 30m, 2h, 7d (s, m, h, d, w).")
@click.option("--until", type=Moment(), default=None,
              help="Only requests before TIME (the same forms as --since).")
@click.option("--outcome", type=click.Choice(get_args(Outcome)), default=None,
              help="Only requests the provider answered so: received, refused, unanswered.")
@click.option("--json", "as_json", is_flag=True,
              help="Print origins and deliveries as one JSON object.")
@click.option("--csv", "as_csv_flag", is_flag=True,
              help="Print the deliveries as CSV with a header row (with --client, the images "
                   "sent to gateway clients).")
def audit(source: Location, digest: str | None, wire: str | None, model: str | None,
          client: str | None, tool: str | None, since: str | None, until: str | None,
          outcome: Outcome | None, as_json: bool, as_csv_flag: bool) -> None:
    """Which tool images went to which provider, from which tool.

    Every delivery of a tool image in SOURCE (a store or a JSON Lines stream): the request that
    carried it, its wire, model and host, whether the image sat in the tool result (native) or in
    a message after it (alternate), and whether the provider received or refused it and the
    image was then stripped. Images that `fuseforks gateway` sent back to an MCP client are
    listed too, with the client's name and version. With --digest, also where the image came
    from: the tool, its server and round."""
    if client is not None and (wire is not None or model is not None):
        raise click.UsageError("--client names a gateway client: it cannot be combined with "
                               "--provider or --model")
    if as_json and as_csv_flag:
        raise click.UsageError("--json and --csv cannot be used together")
    with open_source(source) as opened:
        full = resolve_digest(opened, digest) if digest is not None else None
        if digest is not None and full is None:
            rows = AuditRows(origins=[], deliveries=[])
        else:
            rows = opened.audit(AuditFilter(digest=full, wire=wire, model=model, tool=tool,
                                            since=since, until=until, outcome=outcome,
                                            client=client))
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
    elif as_csv_flag and client is not None:
        click.echo(csv_text(rows.client_deliveries, ClientDeliveryRow), nl=False)
    elif as_csv_flag:
        click.echo(csv_text(rows.deliveries), nl=False)
    else:
        print_text(rows)
