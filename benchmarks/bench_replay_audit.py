"""Replay + verify of a 100-round turn, and audit queries over a store of 10,000 turns, on SQLite
and on PostgreSQL.

The 100-round turn is recorded by the real engine with instant ports (one camera frame per round,
so the cap works from round 21 on). The 10,000-turn store holds copies of the recorded turns of the
demo scenarios from `replays/`, each with its own turn id and image digests, appended one
transaction per turn like the engine does (the image index is kept by triggers inside those
transactions).
"""

from __future__ import annotations

import hashlib
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from benchmarks.bench_engine import InstantCamera, ScriptedModel, frame
from fuseforks.engine.replay import verify
from fuseforks.engine.turn import Turn, TurnSpec
from fuseforks.events.codec import decode_envelope, encode_envelope
from fuseforks.events.types import ToolResultRecorded
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.stores.jsonl import read_stream
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.sqlite import SqliteStore
from fuseforks.stores.store import EventStore
from tests.stores.server import fresh_database

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
STORE_TURNS = 10_000


async def hundred_round_turn():
    frames = [frame(n) for n in range(30)]
    turn = Turn(TurnSpec(agent="bench", request="watch", max_rounds=101), ScriptedModel([], 100),
                InstantCamera(frames))
    return (await turn.run()).history


def best_of(runs: int, work) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def build_store(store: EventStore) -> list[str]:
    templates = [read_stream(p) for p in sorted(REPLAYS.glob("p4-*.jsonl"))]
    digests = []
    for n in range(STORE_TURNS):
        template = templates[n % len(templates)]
        old = next(e.event.image_digests[0] for e in template
                   if isinstance(e.event, ToolResultRecorded))
        new = hashlib.sha256(f"frame-{n}".encode()).hexdigest()
        lines = [encode_envelope(e).replace(old.encode(), new.encode())
                 .replace(e.turn_id.encode(), f"t{n:05d}".encode()) for e in template]
        store.append([decode_envelope(line) for line in lines])
        digests.append(new)
    return digests


def audit_by_digest(store: EventStore, digests: list[str]) -> list[float]:
    """Seconds each audit of one digest took: its deliveries, then its origin (read model)."""
    samples = []
    for digest in digests[:: STORE_TURNS // 200]:
        started = time.perf_counter()
        rows = store.image_deliveries(digest=digest)
        origins = store.image_origins(digest)
        samples.append(time.perf_counter() - started)
        assert rows and origins
    return samples


def main() -> None:
    history = anyio.run(hundred_round_turn)
    fold_s = best_of(5, lambda: fold(evolve_log, LogState(), history))
    verify_s = best_of(3, lambda: anyio.run(verify, history))
    result = anyio.run(verify, history)
    assert result.identical, result.divergence
    print(f"100-round turn ({len(history)} events): fold to log {fold_s * 1000:.1f} ms, "
          f"replay + verify {verify_s * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "audit.db"
        started = time.perf_counter()
        with SqliteStore(path) as store:
            digests = build_store(store)
        built_s = time.perf_counter() - started
        with SqliteStore(path) as store:
            samples = audit_by_digest(store, digests)
            started = time.perf_counter()
            per_provider = store.image_deliveries(wire="openai-compat")
            provider_s = time.perf_counter() - started
        size_mb = path.stat().st_size / 1e6
    median_ms = statistics.median(samples) * 1000
    print(f"store of {STORE_TURNS:,} turns ({size_mb:.0f} MB) built in {built_s:.1f} s")
    print(f"audit by digest (deliveries + origin): median {median_ms:.2f} ms, "
          f"max {max(samples) * 1000:.2f} ms over {len(samples)} digests (goal <= 1 ms)")
    print(f"audit per provider (openai-compat, {len(per_provider):,} rows): "
          f"{provider_s * 1000:.0f} ms")
    with fresh_database() as url, PostgresStore(url) as store:
        started = time.perf_counter()
        digests = build_store(store)
        built_s = time.perf_counter() - started
        samples = audit_by_digest(store, digests)
    print(f"PostgreSQL store of {STORE_TURNS:,} turns built in {built_s:.1f} s; audit by digest: "
          f"median {statistics.median(samples) * 1000:.2f} ms, max {max(samples) * 1000:.2f} ms "
          "(goal <= 1 ms)")


if __name__ == "__main__":
    main()
