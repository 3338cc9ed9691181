"""`fuseforks replay SOURCE`: every projection of recorded turns, and `--verify` against today's
engine (nothing re-executed: no network, no MCP server)."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import click
import msgspec

from fuseforks.cli.sources import SOURCE, Location, chosen_turns, open_source
from fuseforks.engine.replay import redrive, verify
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    SessionEnded,
    SessionStarted,
    TurnEnded,
    TurnNotStarted,
    TurnStarted,
)
from fuseforks.projections.audit import audit_rows
from fuseforks.projections.fold import fold
from fuseforks.projections.log import turn_log
from fuseforks.projections.session import SessionState, call_views, evolve_session
from fuseforks.projections.summary import turn_usage
from fuseforks.projections.views import repeat_views, request_views


def session_report(envelopes: list[Envelope],
                   verification: dict[str, Any] | None) -> dict[str, Any]:
    """A gateway session: its client, each call with what the client was sent, the log, the
    images each client received."""
    state = fold(evolve_session, SessionState(), envelopes)
    assert state.started is not None
    started = state.started
    report: dict[str, Any] = {
        "session_id": envelopes[0].turn_id,
        "events": len(envelopes),
        "interrupted": state.ended is None,
        "stop": state.ended.cause if state.ended else None,
        "client": started.client, "client_version": started.client_version,
        "transport": started.transport, "profile": started.profile,
        "limits": msgspec.to_builtins(started.limits),
        "result_limits": msgspec.to_builtins(started.result_limits),
        "calls": msgspec.to_builtins(call_views(state)),
        "log": turn_log(envelopes),
        "audit": msgspec.to_builtins(audit_rows(envelopes)),
    }
    if verification is not None:
        report["verify"] = verification
    return report


def print_session_report(report: dict[str, Any]) -> None:
    echo = click.echo
    status = "interrupted: no SessionEnded, replayed up to the last recorded event" \
        if report["interrupted"] else f"stop={report['stop']}"
    echo(f"session {report['session_id']} ({report['events']} events; {status})")
    echo(f"  client: {report['client']} {report['client_version'] or '-'} over "
         f"{report['transport']}, profile {report['profile']}")
    for call in report["calls"]:
        outcome = "no result" if call["ok"] is None else "ok" if call["ok"] else "error"
        echo(f"  call {call['call']} {call['tool']} {call['arguments']} -> {outcome}")
        echo(f"    body: {call['body']!r}")
        for image in call["images"]:
            echo(f"    image {image}")
        echo(f"    sent to the client: {len(call['sent'])} image(s)")
        for note in call["notes"]:
            echo(f"    note {note!r}")
    echo("  log:")
    for line in report["log"]:
        echo(f"    {line}")
    verification = report.get("verify")
    if verification is not None:
        echo("  verify: " + describe(verification))


def turn_report(envelopes: list[Envelope], verification: dict[str, Any] | None) -> dict[str, Any]:
    if isinstance(envelopes[0].event, SessionStarted):
        return session_report(envelopes, verification)
    ended = envelopes[-1].event if isinstance(envelopes[-1].event, TurnEnded) else None
    audit = audit_rows(envelopes)
    report: dict[str, Any] = {
        "turn_id": envelopes[0].turn_id,
        "events": len(envelopes),
        "interrupted": ended is None,
        "stop": ended.stop if ended else None,
        "answer": ended.answer if ended and ended.answer else None,
        "error": ended.error if ended and ended.error else None,
        "usage": turn_usage(envelopes),
        "requests": msgspec.to_builtins(request_views(envelopes)),
        "repeat_guard": msgspec.to_builtins(repeat_views(envelopes)),
        "log": turn_log(envelopes),
        "audit": msgspec.to_builtins(audit),
    }
    if verification is not None:
        report["verify"] = verification
    return report


def missing_seq(envelopes: list[Envelope]) -> int | None:
    """The first seq a turn's recording lacks (its events count 1, 2, 3, … without gaps)."""
    for position, envelope in enumerate(envelopes, start=1):
        if envelope.seq != position:
            return position
    return None


async def check(envelopes: list[Envelope]) -> dict[str, Any]:
    """`verify`, for a recording that is whole. One that is not (an event missing, or no
    TurnStarted to begin with) is compared with today's engine up to where it is broken; the
    first divergence is then either before that point or the point itself, named as such."""
    first = envelopes[0].event
    gap = missing_seq(envelopes)
    drivable = isinstance(first, TurnStarted | TurnNotStarted | SessionStarted)
    if gap is None and drivable:
        return msgspec.to_builtins(await verify(envelopes))
    produced = await redrive(envelopes) if drivable else []

    def made(seq: int) -> Any:
        return msgspec.to_builtins(produced[seq - 1].event) if seq <= len(produced) else None

    divergence: dict[str, Any]
    if gap is None:
        divergence = {"seq": 1, "expected": msgspec.to_builtins(first), "produced": None,
                      "note": f"the recording begins with {envelopes[0].kind}, not TurnStarted: "
                              "today's engine cannot re-drive it"}
    else:
        where = (f"no event {gap}: seq {gap - 1} is followed by seq {envelopes[gap - 1].seq}"
                 if gap > 1 else f"no event 1: it starts at seq {envelopes[0].seq}")
        divergence = {"seq": gap, "expected": None, "produced": made(gap),
                      "note": f"the recording has {where}"}
        for seq in range(1, gap):  # before the gap, each recorded event sits at its seq
            expected = msgspec.to_builtins(envelopes[seq - 1].event)
            if expected != made(seq):  # the engine already differs (fed by events after it)
                divergence = {"seq": seq, "expected": expected, "produced": made(seq),
                              "note": f"the recording also has {where}"}
                break
    return {
        "turn_id": envelopes[0].turn_id, "recorded": len(envelopes), "produced": len(produced),
        "interrupted": not isinstance(envelopes[-1].event, TurnEnded | SessionEnded),
        "divergence": divergence,
    }


def print_report(report: dict[str, Any]) -> None:
    if "session_id" in report:
        print_session_report(report)
        return
    echo = click.echo
    status = "interrupted: no TurnEnded, replayed up to the last recorded event" \
        if report["interrupted"] else f"stop={report['stop']}"
    echo(f"turn {report['turn_id']} ({report['events']} events; {status})")
    echo(f"  answer: {report['answer']!r}" if report["answer"] is not None else "  answer: none")
    if report["error"] is not None:
        echo(f"  error: {report['error']}")
    tokens = report["usage"]
    echo(f"  usage: input={tokens['input_tokens']} output={tokens['output_tokens']} "
         f"cache_read={tokens['cache_read_tokens']} cache_write={tokens['cache_write_tokens']} "
         f"({tokens['responses']} responses)")
    for request in report["requests"]:
        echo(f"  request seq={request['seq']} round={request['round']} {request['purpose']} "
             f"-> {request['wire']} {request['model']} at {request['endpoint_host']}")
        if request["system"]:
            echo(f"    system: {request['system']}")
        for message in request["messages"]:
            line = f"    {message['role']}: {message['text']!r}"
            if message["tool_calls"]:
                line += " calls " + "; ".join(message["tool_calls"])
            echo(line)
            for image in message["images"]:
                echo(f"      image {image}")
            if message["caption"]:
                echo(f"      caption {message['caption']!r}")
    echo("  repeat guard:")
    for row in report["repeat_guard"]:
        echo(f"    round {row['round']}: {row['tool']} {row['arguments']} "
             f"body_chars={row['body_chars']} images={row['images']} seen={row['count']}")
    echo("  log:")
    for line in report["log"]:
        echo(f"    {line}")
    echo("  audit:")
    for row in report["audit"]["deliveries"]:
        echo(f"    {row['digest']} from {row['tool']} -> {row['wire']} {row['model']} "
             f"{row['placement']} {row['outcome']}{' stripped' if row['stripped'] else ''}")
    verification = report.get("verify")
    if verification is not None:
        echo("  verify: " + describe(verification))


def describe(verification: dict[str, Any]) -> str:
    divergence = verification["divergence"]
    if divergence is None:
        tail = " (the recording was interrupted; the engine matches it as far as it goes)" \
            if verification["interrupted"] else ""
        return f"identical ({verification['recorded']} events){tail}"
    note = divergence.get("note")
    if note and (divergence["expected"] is None or divergence["produced"] is None):
        return (f"DIVERGED at seq {divergence['seq']}: {note}; "
                f"produced {_short(divergence['produced'])}")
    return (f"DIVERGED at seq {divergence['seq']}: expected {_short(divergence['expected'])}, "
            f"produced {_short(divergence['produced'])}" + (f"; {note}" if note else ""))


def _short(event: dict[str, Any] | None) -> str:
    return "nothing" if event is None else msgspec.json.encode(event).decode()


@click.command(epilog="""\b
Examples:
  fuseforks replay fuseforks.db --verify
  fuseforks replay replays/cap-at-20.jsonl --turn cap --json
  OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 fuseforks replay fuseforks.db --otlp""")
@click.argument("source", type=SOURCE)
@click.option("--turn", "turn_id", default=None,
              help="Only this turn: its id or a unique prefix of it.")
@click.option("--verify", "check_engine", is_flag=True,
              help="Re-drive today's engine with the recorded provider responses and tool "
                   "outputs (no network, no MCP server) and compare the events it emits; exit 1 "
                   "at the first divergence.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON list, one object per turn.")
@click.option("--otlp", "to_otlp", is_flag=True,
              help="Instead, send each turn's OpenTelemetry spans to the OTLP/HTTP endpoint of "
                   "the environment (OTEL_EXPORTER_OTLP_ENDPOINT, default "
                   "http://localhost:4318), one line per turn sent; needs fuseforks[otel].")
def replay(source: Location, turn_id: str | None, check_engine: bool, as_json: bool,
           to_otlp: bool) -> None:
    """Show recorded turns; --verify re-drives today's engine on them.

    For every turn in SOURCE (a store or a JSON Lines stream): its answer and token usage, each
    request as the provider received it (images as digest, format and size), the repeat guard's
    counts per round, the log lines and the image deliveries. For a gateway session: its client,
    and each call with the images the client was sent and the notes the gateway added; --verify
    re-drives today's gateway on the recorded calls and results."""
    with open_source(source) as opened:
        turns = chosen_turns(opened, turn_id)
    if to_otlp:
        if check_engine or as_json:
            raise click.UsageError("--otlp sends the turns' spans; it takes no --verify or --json")
        if not turns:
            click.echo(f"no turns in {source}")
        send_spans(list(turns.values()))
        return
    reports = []
    for envelopes in turns.values():
        verification = anyio.run(check, envelopes) if check_engine else None
        reports.append(turn_report(envelopes, verification))
    if as_json:
        click.echo(msgspec.json.encode(reports).decode())
    elif not reports:
        click.echo(f"no turns in {source}")
    else:
        for report in reports:
            print_report(report)
    diverged = [r.get("turn_id") or r["session_id"] for r in reports
                if r.get("verify", {}).get("divergence")]
    if diverged:
        click.echo(f"Error: {len(diverged)} of {len(reports)} turns diverged from today's engine: "
                   + ", ".join(diverged), err=True)
        sys.exit(1)


def send_spans(turns: list[list[Envelope]]) -> None:
    """`--otlp`: one OTLP/HTTP export request per turn (fuseforks.traces), one line each."""
    from fuseforks.core.errors import FuseforksError
    from fuseforks.traces.recorded import Sending

    try:
        sending = Sending()
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    refused = []
    try:
        for sent in sending.send(turns):
            if sent.accepted:
                click.echo(f"sent {sent.turn_id}: {sent.spans} spans, trace {sent.trace_id}, "
                           f"to {sending.endpoint}")
            else:
                refused.append(sent.turn_id)
                click.echo(f"not sent {sent.turn_id}: {sending.endpoint} did not accept its "
                           f"{sent.spans} spans")
    finally:
        sending.close()
    if refused:
        raise click.ClickException(f"{len(refused)} of {len(turns)} turns not sent: "
                                   + ", ".join(refused))
