"""The per-turn locks: one holder at a time, a look at which are free that takes none, and a lock
kept across the loss of its connection (a database restart ends every session)."""

from __future__ import annotations

import anyio
import psycopg

from fuseforks.jetstream.locks import Kept, Locks
from tests.stores.test_postgres_store import wait_gone


def end_session_of(url: str, name: str) -> None:
    """End the server session that holds the lock `name`, as a server restart would."""
    with psycopg.connect(url, autocommit=True) as connection:
        (pid,) = connection.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
            "((classid::bigint << 32) | objid::bigint) = hashtext(current_schema() || "
            "':fuseforks:' || %s)::bigint", [name]).fetchone() or (None,)
        connection.execute("SELECT pg_terminate_backend(%s)", [pid])
    wait_gone(url, pid)  # its locks with it


def test_free_names_the_locks_no_one_holds_and_takes_none(pg_url: str) -> None:
    locks = Locks(pg_url)
    names = [f"turn:t{i}" for i in range(6)]
    held = [locks.try_take(name) for name in names[:3]]
    assert all(held) and locks.try_take(names[0]) is None
    assert sorted(locks.free(names)) == names[3:]
    taken = [locks.try_take(name) for name in names[3:]]  # the look took none of them
    assert all(taken)
    for lock in [*held, *taken]:
        assert lock is not None
        lock.release()


def test_a_kept_lock_is_taken_again_when_its_session_ends(pg_url: str) -> None:
    locks = Locks(pg_url)
    lock = locks.try_take("turn:kept")
    assert lock is not None
    kept = Kept(locks, "turn:kept", lock)
    again, taken = anyio.Event(), []

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(kept.keep, lambda: taken.append(True), again.set)
            await anyio.to_thread.run_sync(end_session_of, pg_url, "turn:kept")
            await again.wait()
            group.cancel_scope.cancel()

    anyio.run(main)
    assert taken == [] and locks.try_take("turn:kept") is None  # held again, by the keeper
    kept.release()


def test_a_kept_lock_another_process_took_first_says_so(pg_url: str) -> None:
    locks = Locks(pg_url)
    lock = locks.try_take("turn:lost")
    assert lock is not None
    kept = Kept(locks, "turn:lost", lock)
    end_session_of(pg_url, "turn:lost")
    other = locks.try_take("turn:lost")  # another worker, quicker than the keeper
    assert other is not None
    told = anyio.Event()

    async def main() -> None:
        with anyio.fail_after(60):  # a last resort against a hang, not a speed check
            await kept.keep(told.set)

    anyio.run(main)
    assert told.is_set()
    other.release()
    kept.release()


def test_a_lock_session_is_probed_by_the_server_too(pg_url: str) -> None:
    """A holder whose machine vanishes without closing its socket: the server ends the session,
    and frees the lock, within seconds — not after the operating system's two hours."""
    lock = Locks(pg_url).try_take("turn:probed")
    assert lock is not None
    connection = lock._connection
    settings = {name: connection.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
                for name in ("tcp_keepalives_idle", "tcp_keepalives_interval",
                             "tcp_keepalives_count", "tcp_user_timeout")}
    assert settings == {"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2",
                        "tcp_keepalives_count": "3", "tcp_user_timeout": "10000"}
    lock.release()
