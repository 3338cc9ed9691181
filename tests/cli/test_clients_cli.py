"""`fuseforks clients`: the console's clients pages in a terminal, from the same read model."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.projections.clients import KINDS, client_moments, totals
from fuseforks.stores.jsonl import read_stream

REPLAY = Path(__file__).resolve().parents[2] / "replays" / "gateway-claude-desktop.jsonl"
HEAD = ("  sessions  results  passed through  re-encoded  shrunk  dropped  from servers"
        "  sent to the client")


def run(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(main, ["clients", str(REPLAY), *args])
    return done.exit_code, done.stdout, done.stderr


def test_each_client_with_what_the_gateway_did_for_it() -> None:
    assert run() == (0, "client   " + HEAD + "\n"
                        "claude-ai         1        3               1           2       0"
                        "        0       8708037              228866\n", "")


def test_one_client_by_the_hour_and_a_time_range() -> None:
    assert run("--client", "claude-ai") == (
        0, "hour             " + HEAD + "\n"
           "2026-11-30T00:00Z         1        3               1           2       0        0"
           "       8708037              228866\n", "")
    assert run("--until", "2026-01-01") == (0, "no gateway client\n", "")


def test_json_is_the_read_model_the_console_shows() -> None:
    code, out, _ = run("--json")
    assert code == 0
    moments = client_moments(e for e in read_stream(REPLAY) if type(e.event).__name__ in KINDS)
    assert json.loads(out) == {
        name: {"sessions": t.sessions, "results": t.results, "passed": t.passed,
               "re_encoded": t.re_encoded, "shrunk": t.shrunk, "dropped": t.dropped,
               "received_bytes": t.received_bytes, "sent_bytes": t.sent_bytes}
        for name, t in totals(moments).items()}


def test_a_client_it_never_served_is_one_line() -> None:
    code, out, err = run("--client", "nobody")
    assert (code, out) == (1, "")
    assert err == f"Error: no gateway client 'nobody' in {REPLAY}\n"
