"""Not collected by the suite: `test_the_test_run_leaves_nothing_behind` runs this file in a
pytest of its own and kills that pytest while everything below is up — PostgreSQL, NATS, the
provider simulator, an MCP server over HTTP and a `fuseforks worker` with its stdio camera,
started exactly as the suite starts them."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.mcp.conftest import http_server
from tests.stores.server import fresh_database
from tests.workers.harness import Cluster
from tests.workers.nats_server import NatsServer

REPO = Path(__file__).resolve().parents[3]


def test_everything_up_until_killed(tmp_path: Path) -> None:
    nats = NatsServer()
    with fresh_database() as pg_url:
        cluster = Cluster(pg_url, nats.url, tmp_path).__enter__()
        cluster.start_worker("w1")
        mcp = http_server([str(REPO / "tests" / "mcp" / "servers" / "content.py")])
        mcp.__enter__()  # kept in a name: a dropped generator would stop its server
        Path(os.environ["PROBE_READY"]).write_text(f"{os.getpid()}\n")
        print("everything is up", file=sys.stderr, flush=True)
        time.sleep(3600)  # until the outer test kills this run
        mcp.__exit__(None, None, None)
