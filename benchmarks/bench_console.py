"""`fuseforks console` on a store of 10,000 turns: how long the turns page takes to render.

The store is the one `bench_replay_audit` builds (copies of the demo scenarios' recorded turns,
one transaction per turn). The console runs as the command a user starts, in its own process,
and every page is fetched over HTTP on 127.0.0.1, so a figure is what a browser waits for: the
store read, the template and the socket. A page reads its own rows of the read model's
summaries and two counts; the first page is cold, the others are what a person clicking around,
or the page's own live refresh, sees after it — and the first page after a turn was added to the
store.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import msgspec

from benchmarks.bench_replay_audit import STORE_TURNS, build_store
from fuseforks.core.leash import leashed
from fuseforks.events.codec import decode_envelope, encode_envelope
from fuseforks.stores.sqlite import SqliteStore

GOAL_MS = 200
RUNS = 20


def timed(client: httpx.Client, path: str) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, (path, response.status_code)
    return elapsed * 1000, response


def add_turn(path: Path, n: int) -> None:
    """One more turn, the newest: a copy of the first with its own id and times, appended as the
    engine does."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    with SqliteStore(path) as store:
        template = store.read("t00000")
        store.append([msgspec.structs.replace(decode_envelope(
            encode_envelope(e).replace(b"t00000", f"n{n:05d}".encode())), at=now)
            for e in template])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "console.db"
        started = time.perf_counter()
        with SqliteStore(path) as store:
            build_store(store)
        print(f"store of {STORE_TURNS:,} turns ({path.stat().st_size / 1e6:.0f} MB) built in "
              f"{time.perf_counter() - started:.1f} s")
        console = subprocess.Popen(
            leashed([sys.executable, "-m", "fuseforks", "console", str(path), "--port", "0"]),
            stdout=subprocess.PIPE, text=True)
        try:
            assert console.stdout is not None
            url = console.stdout.readline().strip().rsplit(" on ", 1)[1]
            with httpx.Client(base_url=url, timeout=60) as client:
                cold, first = timed(client, "/")
                assert first.text.count('<tr data-turn="') == 50
                assert f"{STORE_TURNS} of {STORE_TURNS} turns" in first.text
                warm = [timed(client, "/")[0] for _ in range(RUNS)]
                changed = []
                for n in range(RUNS):
                    add_turn(path, n)
                    elapsed, page = timed(client, "/")
                    assert f'data-turn="n{n:05d}"' in page.text
                    changed.append(elapsed)
                older = [timed(client, f"/?page={n}")[0] for n in range(2, 2 + RUNS)]
                filter_cold, _ = timed(client, "/?wire=gemini")
                filtered = [timed(client, "/?wire=gemini")[0] for _ in range(RUNS)]
                turn = [timed(client, "/turns/t09999")[0] for _ in range(RUNS)]
        finally:
            console.terminate()
            console.wait(timeout=30)
    median = statistics.median(warm)
    verdict = "✔" if median < GOAL_MS else "✘"
    print(f"turns page, newest 50 of {STORE_TURNS:,}: first (cold) {cold:.0f} ms; then median "
          f"{median:.0f} ms, max {max(warm):.0f} ms over {RUNS} (goal < {GOAL_MS} ms {verdict})")
    print(f"turns page after a turn was added: median {statistics.median(changed):.0f} ms, max "
          f"{max(changed):.0f} ms over {RUNS} (its summaries read again)")
    print(f"turns page, older pages 2-{RUNS + 1}: median {statistics.median(older):.0f} ms "
          f"(each page read from the summaries)")
    print(f"turns page filtered by wire: first {filter_cold:.0f} ms (a count and a page), "
          f"then median {statistics.median(filtered):.0f} ms")
    print(f"turn page (12 events): median {statistics.median(turn):.1f} ms")


if __name__ == "__main__":
    main()
