"""`fuseforks console [SOURCE]`: serve a read-only web page over a store or a stream."""

from __future__ import annotations

import os
from pathlib import Path

import click

from fuseforks.cli.sources import SOURCE, Location, warn
from fuseforks.core.errors import FuseforksError


def _token(token_file: Path | None) -> str | None:
    from fuseforks.console.guard import TOKEN_ENV
    from fuseforks.edge.serving import check_token

    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            raise click.ClickException(f"{token_file}: cannot read the token ({reason})") from None
        where = str(token_file)
    elif TOKEN_ENV in os.environ:
        text, where = os.environ[TOKEN_ENV], TOKEN_ENV
    else:
        return None
    try:
        return check_token(text)
    except ValueError as error:
        raise click.ClickException(f"{where}: {error}") from None


@click.command(epilog="""\b
Examples:
  fuseforks console                     the demo's ./fuseforks.db, at http://127.0.0.1:8470/
  fuseforks console exported.jsonl --port 0
  fuseforks console "$FUSEFORKS_DB" --host 0.0.0.0 --token-file ~/.console-token""")
@click.argument("source", type=SOURCE, default="fuseforks.db", required=False)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to serve on. Any address but a loopback one (127.0.0.1, ::1, "
                   "localhost) needs a token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8470, show_default=True,
              help="The port; 0 picks a free one (the first line printed names it).")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A file holding the token every request must present (at least 16 "
                   "characters); else FUSEFORKS_CONSOLE_TOKEN, if set. Never on the command "
                   "line, where other users of the machine can read it.")
def console(source: Location, host: str, port: int, token_file: Path | None) -> None:
    """Serve a read-only web page over a store or a stream.

    The turns of SOURCE (an SQLite store, default ./fuseforks.db as the demo writes it; a
    PostgreSQL URL; or a JSON Lines stream), newest first and live; each turn as a timeline with
    its tool images as cards and its log lines; the audit search; the capabilities table. The
    store is opened read-only and nothing is ever written. Until Ctrl-C or SIGTERM."""
    from fuseforks.console.server import serve
    from fuseforks.console.source import RecordSource
    from fuseforks.core.hosts import is_loopback_host
    from fuseforks.edge.serving import bind

    token = _token(token_file)
    if token is None and not is_loopback_host(host):
        raise click.UsageError(
            f"serving on {host} lets other machines read the record: set FUSEFORKS_CONSOLE_TOKEN "
            "or give --token-file FILE (or serve on 127.0.0.1)")
    try:
        record = RecordSource(source)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:
        raise click.ClickException(f"{source}: cannot read it ({error.strerror})") from None
    with record.reading() as reader:
        for notice in reader.notices():
            warn(notice)
    try:
        try:
            sock = bind(host, port)
        except OSError as error:
            reason = os.strerror(error.errno) if error.errno else str(error)
            raise click.ClickException(f"console: {reason} ({host}:{port})") from None
        with sock:
            serve(record, sock, token=token, announce=lambda line: click.echo(line, nl=True))
    finally:
        record.close()
    click.echo("console: stopped")
