"""`fuseforks log SOURCE`: print the `fuseforks.log` projection of recorded turns; `--follow`:
the live lines of every worker, from the message bus, each beginning with its turn's short id."""

from __future__ import annotations

import anyio
import click

from fuseforks.cli.sources import SOURCE, Location, load_turns
from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnStarted
from fuseforks.projections.log import turn_log


@click.command(epilog="""\b
Examples:
  fuseforks log fuseforks.db --turn 3f2a
  fuseforks log fuseforks.db --conversation "$CONVERSATION_ID"
  fuseforks log --follow --nats nats://bus:4222""")
@click.argument("source", type=SOURCE, required=False)
@click.option("--turn", "turn_id", default=None,
              help="Only this turn: its id or a unique prefix of it.")
@click.option("--conversation", "conversation_id", default=None,
              help="Only the turns of this conversation (its id), in order.")
@click.option("--follow", is_flag=True,
              help="Print the lines of every worker's turns as they are recorded (needs --nats).")
@click.option("--nats", "nats_url", default=None, envvar="FUSEFORKS_NATS", show_envvar=True,
              help="With --follow: the NATS server with JetStream (URL).")
@click.option("--durable", default=None,
              help="With --follow: a consumer name the server remembers; following again with "
                   "the same name goes on where it stopped.")
@click.option("--from-start", is_flag=True,
              help="With --follow: begin with every event the bus still holds.")
def log(source: Location | None, turn_id: str | None, conversation_id: str | None, follow: bool,
        nats_url: str | None, durable: str | None, from_start: bool) -> None:
    """Print the log lines of recorded turns.

    The lines `fuseforks.log` holds for every turn in SOURCE (a store or a JSON Lines stream),
    folded again from the recorded events. With --follow, no SOURCE: the lines of every
    worker's turns as they happen, from the message bus, each line once and beginning with its
    turn's short id, until Ctrl-C."""
    if follow:
        if nats_url is None:
            raise click.UsageError("--follow needs --nats URL (or FUSEFORKS_NATS)")
        if source is not None:
            raise click.UsageError("--follow reads the message bus, not SOURCE")
        try:
            anyio.run(_follow, nats_url, durable, from_start)
        except KeyboardInterrupt:
            pass
        except FuseforksError as error:
            raise click.ClickException(str(error)) from None
        return
    if source is None:
        raise click.UsageError("Missing argument 'SOURCE' (or use --follow)")
    turns = load_turns(source, turn_id)
    if conversation_id is not None:
        turns = {t: envelopes for t, envelopes in turns.items()
                 if conversation_of(envelopes) == conversation_id}
        if not turns:
            raise click.ClickException(f"{source}: no turn of conversation {conversation_id!r}")
    for envelopes in turns.values():
        for text in turn_log(envelopes):
            click.echo(text)


def conversation_of(envelopes: list[Envelope]) -> str:
    first = envelopes[0].event if envelopes else None
    return first.conversation_id if isinstance(first, TurnStarted) else ""


async def _follow(nats_url: str, durable: str | None, from_start: bool) -> None:
    from fuseforks.bus.subscribers import LogWriter
    from fuseforks.jetstream.feed import follow
    from fuseforks.jetstream.streams import connect, ensure_streams, redact_bus_url

    shown = True  # an event read only for its turn's context adds no line

    def show(line: str) -> None:
        if shown:
            click.echo(line)

    shown_url = redact_bus_url(nats_url)

    def ready() -> None:
        click.echo(f"following every worker's turns at {shown_url}", err=True)

    def lost() -> None:
        click.echo(f"lost the bus at {shown_url}; trying again until it is back", err=True)

    def back() -> None:
        click.echo(f"back on the bus at {shown_url}; following again", err=True)

    writer = LogWriter(show, name_turns=True)
    connection = await connect(nats_url, name="fuseforks-log", on_lost=lost, on_back=back)
    try:
        js = connection.jetstream()
        await ensure_streams(js)
        async for delivery in follow(js, durable=durable, from_start=from_start, ready=ready):
            shown = not delivery.earlier
            await writer.handle([delivery.envelope])
    finally:
        await connection.close()
