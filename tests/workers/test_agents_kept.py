"""A worker keeps at most `max_agents` agents open: beyond that, the least recently used idle
one is closed (its HTTP client and bus), and a later request for it opens it again."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.to_thread

from fuseforks.events.types import TurnEnded
from fuseforks.jetstream.streams import connect, ensure_streams
from fuseforks.jetstream.work import WorkRequest, submit
from fuseforks.simulator.server import WIRE_PREFIXES
from fuseforks.workers import Worker, WorkerSettings
from tests.workers.harness import KEYS, Cluster
from tests.workers.nats_server import Given, NatsServer


def test_a_worker_closes_the_least_recently_used_idle_agents(
        pg_url: str, nats: NatsServer | Given, tmp_path: Path,
        monkeypatch: object) -> None:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)  # type: ignore[attr-defined]
    names = ["a", "b", "c", "a", "d", "e"]
    with Cluster(pg_url, nats.url, tmp_path) as cluster:
        worker = Worker(db=pg_url, nats=nats.url, mcp=tmp_path / "mcp.json",
                        base_urls={"anthropic": cluster.base_url + WIRE_PREFIXES["anthropic"]},
                        name="w-lru", settings=WorkerSettings(concurrency=1, max_agents=2),
                        say=lambda line: None)
        open_after: list[list[str]] = []

        async def main() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(worker.run)
                connection = await connect(nats.url)
                js = connection.jetstream()
                await ensure_streams(js)
                for index, name in enumerate(names):
                    await submit(js, WorkRequest(
                        turn_id=f"turn-lru-{index}", wire="anthropic",
                        model="claude-sonnet-5-5", agent=name, request="Look at the camera."))
                    while (await anyio.to_thread.run_sync(cluster.counts))[1] < index + 1:  # noqa: ASYNC110
                        await anyio.sleep(0.05)
                    await anyio.sleep(0.05)  # the request is acknowledged, the agent idle
                    open_after.append([key[2] for key in worker._agents])
                await connection.close()
                worker.stop()

        anyio.run(main)
        turns = cluster.turns()
    assert open_after == [["a"], ["a", "b"], ["b", "c"], ["c", "a"], ["a", "d"], ["d", "e"]]
    assert all(isinstance(t[-1].event, TurnEnded) and t[-1].event.stop == "answered"
               for t in turns.values()) and len(turns) == 6
    assert [t[0].event.agent for _, t in sorted(turns.items())] == names  # type: ignore[union-attr]
