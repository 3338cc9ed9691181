"""`fuseforks turns SOURCE`: the recorded turns, one line each."""

from __future__ import annotations

import click
import msgspec

from fuseforks.cli.sources import SOURCE, Location, open_source
from fuseforks.cli.tables import of_fields
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    RequestSent,
    ResultSent,
    RoundStarted,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    TurnEnded,
    TurnStarted,
)


class TurnRow(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    agent: str
    wire: str
    model: str
    started: str
    """When the turn started (its first event's time)."""
    rounds: int
    stop: str
    """How the turn ended; `cut` when its record has no end (the process died)."""
    images_sent: int
    """Distinct tool images its requests carried to the provider (refused requests included)."""
    events: int


def turn_row(envelopes: list[Envelope]) -> TurnRow:
    if isinstance(envelopes[0].event, SessionStarted):
        return session_row(envelopes)
    started = next((e.event for e in envelopes if isinstance(e.event, TurnStarted)), None)
    ended = next((e.event for e in reversed(envelopes) if isinstance(e.event, TurnEnded)), None)
    rounds = [e.event.round for e in envelopes if isinstance(e.event, RoundStarted)]
    sent = {d.digest for e in envelopes if isinstance(e.event, RequestSent)
            for d in e.event.images}
    return TurnRow(
        turn_id=envelopes[0].turn_id,
        agent=started.agent if started else "-",
        wire=started.wire if started else "-",
        model=started.model if started else "-",
        started=envelopes[0].at,
        rounds=ended.rounds if ended else max(rounds, default=0),
        stop=ended.stop if ended else "cut",
        images_sent=len(sent),
        events=len(envelopes),
    )


def session_row(envelopes: list[Envelope]) -> TurnRow:
    """A gateway session as a row: `gateway` for its wire, its client where a model would be,
    its calls for rounds, how it ended, the images it sent its client."""
    started = envelopes[0].event
    assert isinstance(started, SessionStarted)
    ended = envelopes[-1].event if isinstance(envelopes[-1].event, SessionEnded) else None
    sent = {d for e in envelopes if isinstance(e.event, ResultSent) for d in e.event.images}
    return TurnRow(
        turn_id=envelopes[0].turn_id, agent=started.agent, wire="gateway",
        model=f"{started.client} {started.client_version}".strip(), started=envelopes[0].at,
        rounds=sum(isinstance(e.event, ToolCalled) for e in envelopes),
        stop=ended.cause if ended else "cut", images_sent=len(sent), events=len(envelopes))


_COLUMNS = (("turn", "turn_id"), ("agent", "agent"), ("wire", "wire"), ("model", "model"),
            ("started", "started"), ("rounds", "rounds"), ("stop", "stop"),
            ("images sent", "images_sent"))


def table(rows: list[TurnRow]) -> list[str]:
    return of_fields(_COLUMNS, rows)


@click.command(epilog="""\b
Examples:
  fuseforks turns fuseforks.db
  fuseforks turns exported.jsonl --json""")
@click.argument("source", type=SOURCE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list, one object per turn.")
def turns(source: Location, as_json: bool) -> None:
    """List the recorded turns of a store or stream.

    One line per turn in SOURCE, oldest first: its id, agent, wire, model, when it started, its
    tool rounds, how it stopped (`cut` when the record has no end), and how many distinct tool
    images its requests sent. Any unique prefix of an id works wherever a command takes --turn."""
    with open_source(source) as opened:
        rows = [turn_row(envelopes) for envelopes in opened.turns().values() if envelopes]
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
    elif not rows:
        click.echo(f"no turns in {source}")
    else:
        for line in table(rows):
            click.echo(line)
