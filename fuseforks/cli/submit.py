"""`fuseforks submit`: put a turn request on the work queue; `--wait` follows the turn."""

from __future__ import annotations

import sys
import uuid

import anyio
import click

from fuseforks.bus.subscribers import LogWriter
from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import LANGUAGES, parse_wire
from fuseforks.events.types import TurnEnded
from fuseforks.jetstream.streams import EVENTS_STREAM, connect, decode, ensure_streams, turn_subject
from fuseforks.jetstream.work import WorkRequest
from fuseforks.jetstream.work import submit as put


@click.command(epilog="""\b
Example:
  fuseforks submit --nats nats://bus:4222 --wire anthropic --model claude-sonnet-5-5 \\
      --wait "Take a picture and describe it."
""")
@click.argument("request")
@click.option("--nats", "nats_url", required=True, envvar="FUSEFORKS_NATS", show_envvar=True,
              help="The NATS server with JetStream (URL).")
@click.option("--wire", required=True, help="The provider wire the turn runs on.")
@click.option("--model", required=True, help="The model the turn asks.")
@click.option("--agent", default="agent", show_default=True, help="The agent's name.")
@click.option("--conversation", "conversation_id", default="",
              help="Continue this conversation (its earlier exchanges are sent).")
@click.option("--language", type=click.Choice(LANGUAGES), default="en", show_default=True,
              help="The village language of the turn's notes.")
@click.option("--wait", is_flag=True, help="Follow the turn: print its log lines and answer.")
def submit(request: str, nats_url: str, wire: str, model: str, agent: str,
           conversation_id: str, language: str, wait: bool) -> None:
    """Put a turn request on the work queue and print the turn id.

    Workers own the provider endpoints and keys: a request names the wire and the model only.
    With --wait, exit 0 when the turn answered, 1 when it ended otherwise."""
    try:
        parse_wire(wire)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--wire") from None
    work = WorkRequest(turn_id=f"turn-{uuid.uuid4().hex}", wire=wire, model=model,
                       request=request, agent=agent, conversation_id=conversation_id,
                       language=language)  # type: ignore[arg-type]

    async def main() -> int:
        connection = await connect(nats_url, name="fuseforks-submit")
        try:
            js = connection.jetstream()
            await ensure_streams(js)
            subscription = None
            if wait:  # subscribed before the request exists: no event can be missed
                subscription = await js.subscribe(turn_subject(work.turn_id), stream=EVENTS_STREAM,
                                                  ordered_consumer=True)
            await put(js, work)
            click.echo(work.turn_id)
            if subscription is None:
                return 0
            return await follow_turn(subscription, work.turn_id)
        finally:
            await connection.close()

    try:
        sys.exit(anyio.run(main))
    except FuseforksError as error:
        raise click.ClickException(str(error)) from None


async def follow_turn(subscription: object, turn_id: str) -> int:
    """Print the turn's log lines as they are recorded, then its answer; the exit code."""
    writer = LogWriter(click.echo)
    seen = 0
    while True:
        message = await subscription.next_msg(timeout=None)  # type: ignore[attr-defined]
        envelope = decode(message.data)
        if envelope.turn_id != turn_id or envelope.seq <= seen:
            continue
        seen = envelope.seq
        await writer.handle([envelope])
        if isinstance(envelope.event, TurnEnded):
            ended = envelope.event
            if ended.answer:
                click.echo(ended.answer)
            if ended.error:
                click.echo(f"error: {ended.error}", err=True)
            return 0 if ended.stop == "answered" else 1
