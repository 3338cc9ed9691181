"""A short PostgreSQL outage costs a turn nothing: the commit that failed while the server was
away is tried again until it is back, with the turn's lock kept, so a tool that ran is never
lost and never run twice."""

from __future__ import annotations

from pathlib import Path

import anyio

from fuseforks.engine.replay import verify
from fuseforks.events.types import ToolResultRecorded, TurnEnded, TurnTakenOver
from fuseforks.jetstream.work import WorkRequest
from tests.stores.server import Server
from tests.workers.harness import Cluster
from tests.workers.nats_server import Given, NatsServer


def test_a_postgres_restart_between_a_tool_result_and_its_commit_runs_the_tool_once(
        pg_server: Server, pg_url: str, nats: NatsServer | Given, tmp_path: Path) -> None:
    request = WorkRequest(turn_id="turn-blip", wire="anthropic", model="claude-sonnet-5-5",
                          request="Look at the camera.", agent="blip")
    with Cluster(pg_url, nats.url, tmp_path, shutter=True) as cluster:
        cluster.start_worker("w1")
        cluster.submit([request])
        cluster.wait_for(lambda: cluster.shots() == 1, 60, "the shutter")

        def while_down() -> None:  # the frame reaches the worker; its commit finds no server
            cluster.open_shutter()
            cluster.wait_for(lambda: "trying again on a new connection" in cluster.stderr("w1"),
                             60, "the worker to try its commit again")

        pg_server.restart(while_down=while_down)
        cluster.wait_for(lambda: cluster.counts() == (1, 1), 120, "the turn to end")
        events = cluster.turns()["turn-blip"]
        stderr = cluster.stderr("w1")
    assert cluster.shots() == 1
    kinds = [e.event for e in events]
    assert not any(isinstance(e, TurnTakenOver) for e in kinds), stderr
    (result,) = [e for e in kinds if isinstance(e, ToolResultRecorded)]
    assert result.ok and len(result.image_digests) == 1 and '"seq":1' in result.body
    assert isinstance(kinds[-1], TurnEnded) and kinds[-1].stop == "answered"
    assert kinds[-1].answer.startswith("I see 1 image"), kinds[-1].answer
    assert anyio.run(verify, events).identical
