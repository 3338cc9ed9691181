"""After the demo and a load of large images: no pixels, no base64, no key anywhere we write —
and the audit answers match what the demo knows it did."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
from click.testing import CliRunner

from fuseforks.bus.bus import Bus
from fuseforks.bus.subscribers import LogWriter, StoreWriter
from fuseforks.cli import main
from fuseforks.demo.offline import run_scenarios
from fuseforks.demo.scenarios import DEMO_SCENARIOS
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.types import ToolResultRecorded
from fuseforks.live import HubTools, LiveModel
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.projections.audit import audit_rows
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.wires.base import Endpoint
from fuseforks.wires.registry import get_wire
from tests.engine.rig import FAST, RIG

SENTINEL = "sk-SENTINEL-3f9c2a7d-never-write-me"
SIGNATURES = {
    "JPEG": re.compile(rb"\xff\xd8\xff"),
    "PNG": re.compile(rb"\x89PNG\r\n\x1a\n"),
    "WebP": re.compile(rb"RIFF.{4}WEBP", re.DOTALL),
    "GIF": re.compile(rb"GIF8[79]a"),
}
BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{201,}")


async def load_with_large_images(db: Path, log: Path) -> None:
    server = StdioServer(name="rig", command=sys.executable, args=[str(RIG)])
    async with run_simulator(script=Script(call_tools=("rig__big",))) as sim, ToolHub([server]) as hub:
        model = LiveModel("gemini", "gemini-3.8-flash",
                          Endpoint(base_url=sim.base_urls["gemini"], api_key=SENTINEL),
                          policy=FAST)
        writer = LogWriter.to_file(log)
        with SqliteStore(db) as store:
            async with Bus([writer], required=[StoreWriter(store)]) as bus, anyio.create_task_group() as g:
                for index in range(10):
                    turn = Turn(TurnSpec(agent=f"load_{index}", request="look"), model,
                                HubTools(hub), publish=bus.publish)
                    g.start_soon(turn.run)
        writer.close()
        await model.aclose()


def scan(path: Path) -> list[str]:
    data = path.read_bytes()
    found = [f"{name} signature" for name, pattern in SIGNATURES.items() if pattern.search(data)]
    if BASE64_RUN.search(data):
        found.append("base64 run")
    if SENTINEL.encode() in data:
        found.append("API key")
    return found


def test_no_pixels_base64_or_key_in_store_wal_streams_or_log(tmp_path) -> None:
    db, log = tmp_path / "fuseforks.db", tmp_path / "fuseforks.log"
    keeper = SqliteStore(db)  # an open connection keeps the WAL file on disk to be scanned
    outcomes = anyio.run(run_scenarios, db, log, None, "en", DEMO_SCENARIOS, SENTINEL)
    anyio.run(load_with_large_images, db, log)
    assert len(keeper.turns()) == len(outcomes) + 10
    stream = tmp_path / "all.jsonl"
    exported = CliRunner().invoke(main, ["export", str(db), "-o", str(stream)])
    assert exported.exit_code == 0, exported.output
    files = [db, Path(f"{db}-wal"), stream, log]
    assert all(f.exists() and f.stat().st_size > 0 for f in files), list(files)
    assert log.read_text().count("images=1") == len(outcomes) + 10
    for path in files:
        assert scan(path) == [], path
    keeper.close()


def test_the_scan_itself_finds_what_it_looks_for(tmp_path) -> None:
    planted = tmp_path / "planted"
    planted.write_bytes(b"x\xff\xd8\xffy" + b"A" * 300 + SENTINEL.encode())
    assert scan(planted) == ["JPEG signature", "base64 run", "API key"]


def test_audit_answers_match_what_the_demo_did(tmp_path) -> None:
    db = tmp_path / "fuseforks.db"
    outcomes = anyio.run(run_scenarios, db, tmp_path / "log", None)
    with SqliteStore(db) as store:
        for outcome in outcomes:
            (result,) = [e.event for e in outcome.result.events
                         if isinstance(e.event, ToolResultRecorded)]
            digest = result.image_digests[0]
            origins = store.image_origins(digest)
            assert outcome.result.turn_id in {o.turn_id for o in origins}
            assert {o.tool for o in origins} == {"nik__live_view_image"}
            rows = [d for d in store.image_deliveries(digest=digest)
                    if d.turn_id == outcome.result.turn_id]
            scenario = outcome.scenario
            placements = {"delivered": [get_wire(scenario.wire).placement],
                          "ladder": ["native", "alternate"],
                          "stripped": ["native", "alternate"]}[scenario.expect]
            assert [(d.wire, d.model, d.endpoint_host, d.placement) for d in rows] == [
                (scenario.wire, scenario.model, "127.0.0.1", p) for p in placements]
            outcomes_seen = [(d.outcome, d.stripped) for d in rows]
            assert outcomes_seen == {
                "delivered": [("received", False)],
                "ladder": [("refused", False), ("received", False)],
                "stripped": [("refused", False), ("refused", True)]}[scenario.expect]
        received = store.image_deliveries(wire="perplexity-responses")
        assert [(d.model, d.outcome) for d in received] == [
            ("google/gemini-3.7-flash", "received"),
            ("perplexity/deepseek-v4-pro-0813", "refused"),
            ("perplexity/deepseek-v4-pro-0813", "refused"),
        ]
        folded = [d for o in outcomes for d in audit_rows(o.result.events).deliveries]
        assert store.image_deliveries() == sorted(folded, key=lambda d: (d.at, d.turn_id,
                                                                         d.request_seq))
    cli = CliRunner().invoke(main, ["audit", str(db), "--provider", "openai-compat", "--csv"])
    assert cli.exit_code == 0
    header, row = cli.output.splitlines()
    assert header.startswith("digest,turn_id,request_seq,image,at,round,purpose,wire,model")
    assert ",openai-compat,gemini-3.5-flash-lite,127.0.0.1,alternate," in row
    assert row.endswith(",nik__live_view_image,received,False,answered")
