"""`fuseforks replay SOURCE`: every projection of recorded turns, and `--verify` against today's
engine (nothing re-executed: no network, no MCP server)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import click
import msgspec

from fuseforks.cli.sources import load_turns
from fuseforks.engine.replay import Verification, verify
from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEnded
from fuseforks.projections.audit import audit_rows
from fuseforks.projections.log import turn_log
from fuseforks.projections.views import repeat_views, request_views


def turn_report(envelopes: list[Envelope], verification: Verification | None) -> dict[str, Any]:
    ended = envelopes[-1].event if isinstance(envelopes[-1].event, TurnEnded) else None
    audit = audit_rows(envelopes)
    report: dict[str, Any] = {
        "turn_id": envelopes[0].turn_id,
        "events": len(envelopes),
        "interrupted": ended is None,
        "stop": ended.stop if ended else None,
        "requests": msgspec.to_builtins(request_views(envelopes)),
        "repeat_guard": msgspec.to_builtins(repeat_views(envelopes)),
        "log": turn_log(envelopes),
        "audit": msgspec.to_builtins(audit),
    }
    if verification is not None:
        report["verify"] = msgspec.to_builtins(verification)
    return report


def print_report(report: dict[str, Any]) -> None:
    echo = click.echo
    status = "interrupted: no TurnEnded, replayed up to the last recorded event" \
        if report["interrupted"] else f"stop={report['stop']}"
    echo(f"turn {report['turn_id']} ({report['events']} events; {status})")
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
    return (f"DIVERGED at seq {divergence['seq']}: expected {_short(divergence['expected'])}, "
            f"produced {_short(divergence['produced'])}")


def _short(event: dict[str, Any] | None) -> str:
    return "nothing" if event is None else msgspec.json.encode(event).decode()


@click.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--turn", "turn_id", default=None)
@click.option("--verify", "check", is_flag=True,
              help="Re-drive today's engine with the recorded results and compare its events.")
@click.option("--json", "as_json", is_flag=True)
def replay(source: Path, turn_id: str | None, check: bool, as_json: bool) -> None:
    """Reproduce recorded turns from a store or a JSON Lines stream."""
    reports = []
    for envelopes in load_turns(source, turn_id).values():
        verification = anyio.run(verify, envelopes) if check else None
        reports.append(turn_report(envelopes, verification))
    if as_json:
        click.echo(msgspec.json.encode(reports).decode())
    else:
        for report in reports:
            print_report(report)
    diverged = any(r.get("verify", {}).get("divergence") for r in reports)
    sys.exit(1 if diverged else 0)
