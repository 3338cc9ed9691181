"""The commands on a PostgreSQL URL: the demo recorded into PostgreSQL reads back — replay
--verify, audit, log, export, turns — exactly as from SQLite; export, import and copy move turns
across both; `FUSEFORKS_DB` names the default store; no password is ever printed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
from click.testing import CliRunner, Result

from fuseforks.cli import main
from fuseforks.demo.scenarios import DEMO_SCENARIOS
from fuseforks.stores.jsonl import read_stream
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.urls import redact_url
from tests.helpers import processes
from tests.stores.raw import REPLAYS
from tests.stores.server import PASSWORD

REPO = Path(__file__).resolve().parents[2]
READING = [["turns"], ["turns", "--json"], ["log"], ["audit"], ["audit", "--csv"],
           ["audit", "--json"], ["export"], ["replay", "--verify"], ["replay", "--json"]]
"""The reading commands, each run as `fuseforks COMMAND SOURCE [options]`."""
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
CONVERSATION = re.compile(r"conv-[0-9a-f]{32}")


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(main, list(args), env=env)
    assert PASSWORD not in result.stdout + result.stderr
    return result


def read_all(source: str) -> dict[str, str]:
    outputs = {}
    for command in READING:
        result = invoke(command[0], source, *command[1:])
        assert (result.exit_code, result.stderr) == (0, ""), (command, result.stderr)
        outputs[" ".join(command)] = result.stdout
    return outputs


def test_the_demo_recorded_in_postgres_reads_back_as_in_sqlite(pg_url: str,
                                                              tmp_path: Path) -> None:
    lite = str(tmp_path / "demo.db")
    for db in (lite, pg_url):
        demo = invoke("demo", "--db", db, "--log", str(tmp_path / "demo.log"))
        assert demo.exit_code == 0, demo.stderr
        assert f"turns are recorded into {redact_url(db)} and" in demo.stdout
    on_sqlite, on_postgres = read_all(lite), read_all(pg_url)
    # Two runs of the demo differ in their turn and conversation ids and clock times only.
    with SqliteStore(lite, read_only=True) as a, PostgresStore(pg_url, read_only=True) as b:
        same = dict(zip([t.turn_id for t in b.turns()], [t.turn_id for t in a.turns()],
                        strict=True))
    assert len(same) == len(DEMO_SCENARIOS)

    def alike(text: str, ids: dict[str, str]) -> str:
        for theirs, ours in ids.items():
            text = text.replace(theirs, ours)
        return CONVERSATION.sub("<conversation>", TIME.sub("<time>", text))

    assert {k: alike(v, same) for k, v in on_postgres.items()} == {
        k: alike(v, {}) for k, v in on_sqlite.items()}
    assert on_sqlite["replay --verify"].count("  verify: identical (") == len(DEMO_SCENARIOS)
    # The same events in both stores read back byte for byte.
    copied = str(tmp_path / "copied.db")
    copy = invoke("copy", pg_url, copied)
    assert copy.exit_code == 0, copy.stderr
    assert read_all(copied) == on_postgres


def events_in(name: str) -> int:
    return len(read_stream(REPLAYS / f"{name}.jsonl"))


def test_export_import_and_copy_across_both(pg_url: str, tmp_path: Path) -> None:
    lite = tmp_path / "s.db"
    streams = [str(REPLAYS / f"{name}.jsonl") for name in ("p4-anthropic", "cap-at-20")]
    short, long = events_in("p4-anthropic"), events_in("cap-at-20")
    for stream in streams:
        assert invoke("import", stream, "--db", str(lite)).exit_code == 0
    first = invoke("import", streams[0], env={"FUSEFORKS_DB": pg_url})
    assert first.stdout.splitlines() == [
        f"imported p4-anthropic: events 1-{short}",
        f"{redact_url(pg_url)}: 1 turn imported ({short} events), 0 skipped (already there), "
        "0 refused"]
    copy = invoke("copy", str(lite), pg_url)
    assert (copy.exit_code, copy.stdout.splitlines()) == (0, [
        f"copied cap-at-20: events 1-{long}",
        f"skipped p4-anthropic: already in the store (events 1-{short}, identical)",
        f"{redact_url(pg_url)}: 1 turn copied ({long} events), 1 skipped (already there), "
        "0 refused"])
    again = invoke("copy", str(lite), pg_url)
    assert (again.exit_code, again.stdout.splitlines()[-1]) == (0, (
        f"{redact_url(pg_url)}: 0 turns copied (0 events), 2 skipped (already there), "
        "0 refused; nothing new to copy"))
    exported = {source: invoke("export", source).stdout_bytes for source in (str(lite), pg_url)}
    assert exported[pg_url] == exported[str(lite)]
    assert exported[pg_url].count(b"\n") == short + long
    back = tmp_path / "back.db"
    assert invoke("copy", pg_url, str(back)).exit_code == 0
    assert invoke("export", str(back)).stdout_bytes == exported[str(lite)]


def test_a_conflicting_turn_is_refused_and_the_others_copied(pg_url: str, tmp_path: Path) -> None:
    lite = tmp_path / "s.db"
    for name in ("p4-anthropic", "p4-gemini"):
        assert invoke("import", str(REPLAYS / f"{name}.jsonl"), "--db", str(lite)).exit_code == 0
    assert invoke("import", str(REPLAYS / "p4-gemini.jsonl"), "--db", pg_url).exit_code == 0
    with psycopg.connect(pg_url) as connection:
        connection.execute("UPDATE events SET at = '2026-12-01T00:00:00.000Z' "
                           "WHERE turn_id = 'p4-gemini' AND seq = 3")
    third = read_stream(REPLAYS / "p4-gemini.jsonl")[2]
    copy = invoke("copy", str(lite), pg_url)
    assert copy.exit_code == 1
    assert copy.stdout.splitlines() == [
        f"copied p4-anthropic: events 1-{events_in('p4-anthropic')}",
        f"refused p4-gemini: conflict at seq 3: the store has {third.kind}, the stream has "
        f'{third.kind}; at: store "2026-12-01T00:00:00.000Z", stream "{third.at}"',
        f"{redact_url(pg_url)}: 1 turn copied ({events_in('p4-anthropic')} events), 0 skipped "
        "(already there), 1 refused"]
    assert copy.stderr.splitlines() == [
        "Error: 1 of 2 turns refused, nothing of them was written: p4-gemini"]


def test_reading_a_database_of_another_application_is_one_line(pg_url: str) -> None:
    with psycopg.connect(pg_url) as connection:
        connection.execute("CREATE TABLE invoices (id integer PRIMARY KEY)")
    for command in (["turns", pg_url], ["log", pg_url], ["audit", pg_url], ["export", pg_url],
                    ["replay", pg_url], ["import", str(REPLAYS / "p4-xai.jsonl"), "--db", pg_url],
                    ["copy", str(REPLAYS / "p4-xai.jsonl"), pg_url]):
        result = invoke(*command)
        assert (result.exit_code, result.stdout, result.stderr.splitlines()) == (1, "", [
            f"Error: {redact_url(pg_url)}: a PostgreSQL database, but not a fuseforks store (it "
            "has tables ['invoices'] and no fuseforks_meta); nothing was changed"]), command


def test_run_records_into_the_database_fuseforks_db_names(pg_url: str, tmp_path: Path) -> None:
    simulator = processes.spawn(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", "--any-model",
         "--call", "nik__live_view_image"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, cwd=REPO)
    try:
        assert simulator.stdout is not None
        base = simulator.stdout.readline().strip().removeprefix("simulator: listening on ")
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"nik": {
            "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        done = processes.run(
            [sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model", "m",
             "--base-url", f"{base}/anthropic", "--mcp-config", str(config),
             "--log", str(tmp_path / "run.log"), "Take a picture."],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
            env=env | {"FUSEFORKS_DB": pg_url, "ANTHROPIC_API_KEY": "sk-pg-test"})
    finally:
        simulator.terminate()
        simulator.wait(timeout=10)
        if simulator.stdout is not None:
            simulator.stdout.close()
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert not (tmp_path / "fuseforks.db").exists()
    with PostgresStore(pg_url, read_only=True) as store:
        [turn] = store.turns()
        assert store.read(turn.turn_id)[-1].kind == "TurnEnded"
