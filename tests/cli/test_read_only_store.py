"""An auditor with read access only can read a store: every reading command opens it read-only and
writes nothing — not the file, not a `-wal` or `-shm` beside it, not an upgrade.

Tests run as root, and root ignores file modes; so the auditor is simulated by a child process that
drops to `nobody` (uid 65534) before it reads a store of mode 444 in a directory of mode 555, both
owned by root: the operating system enforces what the auditor may do.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.stores.sqlite import SQLITE_STORE_VERSION, SqliteStore
from tests.cli.crafted import REPLAYS, camera_turn, digest
from tests.helpers import processes
from tests.helpers.streams import import_stream
from tests.stores.older import as_layout

NOBODY = 65534
P4 = "052074359e0f886f7cb5463ffa08f99d9c9452c7fc964c0a8d41e03109414210"

AUDITOR = """
import json, os, sys
from click.testing import CliRunner
from fuseforks.cli import main
store, warm, commands = json.loads(sys.argv[1])
for args in warm:  # the same commands once as root on a copy: every lazy import is done
    CliRunner().invoke(main, args)
os.setgid(65534)
os.setuid(65534)
try:
    open(store, "r+b")
    sys.exit("the auditor can write the store: the test would prove nothing")
except PermissionError:
    pass
results = []
for args in commands:
    result = CliRunner().invoke(main, args)
    failure = None if result.exception is None or isinstance(result.exception, SystemExit) \\
        else repr(result.exception)
    results.append([result.exit_code, result.stdout, result.stderr, failure])
print(json.dumps(results))
"""


def state(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every file of `folder`: content digest, modification time, mode."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns,
                 p.stat().st_mode)
        for p in sorted(folder.iterdir())
    }


def build_store(path: Path) -> Path:
    with SqliteStore(path) as store:
        for name in ("p4-anthropic", "cap-at-20"):
            import_stream(store, REPLAYS / f"{name}.jsonl")
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # checkpointed, closed
    return path


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user can reach (pytest's own tmp folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="fuseforks-auditor-"))
    folder.chmod(0o755)
    yield folder
    for path in folder.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder)


def as_auditor(store: Path, commands: list[list[str]]) -> list[tuple[int, str, str]]:
    """Run each command as `nobody` on `store`, after a warm-up as root on a copy of it."""
    warm_dir = store.parent.parent / "warm"
    warm_dir.mkdir()
    shutil.copy(store, warm_dir / store.name)
    warm = [[str(warm_dir / store.name) if a == str(store) else a for a in c] for c in commands]
    done = processes.run([sys.executable, "-c", AUDITOR, json.dumps([str(store), warm, commands])],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [failure for *_, failure in results] == [None] * len(commands)
    return [(code, out, err) for code, out, err, _ in results]


def lock_up(folder: Path, store: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    assert store.stat().st_uid == 0 != NOBODY


def test_an_auditor_reads_a_store_they_cannot_write(shared: Path) -> None:
    folder = shared / "audit"
    folder.mkdir()
    store = build_store(folder / "fuseforks.db")
    lock_up(folder, store)
    before = state(folder)
    results = as_auditor(store, [
        ["turns", str(store)],
        ["log", str(store), "--turn", "p4"],
        ["audit", str(store), "--digest", P4[:6].upper()],
        ["replay", str(store), "--turn", "cap", "--verify"],
        ["export", str(store)],
    ])
    turns, log, audit, replay, export = results
    assert turns == (0, (
        "turn          agent   wire       model              started                   rounds"
        "  stop      images sent  taken over\n"
        "cap-at-20     replay  anthropic  claude-sonnet-5-5  2026-11-30T00:00:00.000Z      22"
        "  answered           21           0\n"
        "p4-anthropic  replay  anthropic  claude-sonnet-5-5  2026-11-30T00:00:00.000Z       2"
        "  answered            1           0\n"), "")
    assert log == (0, (REPLAYS / "p4-anthropic.log").read_text(), "")
    assert audit == (0, (
        f"origin {P4}: tool nik__live_view_image (server nik) round 1 of turn p4-anthropic at "
        "2026-11-30T00:00:00.050Z; JPEG -> image/jpeg pass_through 640x424 5108 B\n"
        f"2026-11-30T00:00:00.080Z {P4} nik__live_view_image -> anthropic claude-sonnet-5-5 "
        "host=127.0.0.1 native round=2 round received turn=p4-anthropic\n"), "")
    assert (replay[0], replay[1].splitlines()[-1], replay[2]) == (
        0, "  verify: identical (133 events)", "")
    assert export == (0, (REPLAYS / "cap-at-20.jsonl").read_text()
                      + (REPLAYS / "p4-anthropic.jsonl").read_text(), "")
    assert state(folder) == before


def test_reading_where_it_could_write_still_writes_nothing(tmp_path: Path) -> None:
    """Even as root, in a writable folder: no `-wal`, no `-shm`, the file untouched."""
    store = build_store(tmp_path / "fuseforks.db")
    before = state(tmp_path)
    for args in (["turns", str(store)], ["log", str(store)], ["audit", str(store)],
                 ["replay", str(store), "--verify", "--json"], ["export", str(store)]):
        result = CliRunner().invoke(main, args)
        assert (result.exit_code, result.stderr) == (0, ""), args
        assert state(tmp_path) == before, args


def layout(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        (value,) = connection.execute(
            "SELECT value FROM fuseforks_meta WHERE key = 'store_version'").fetchone()
    connection.close()
    return str(value)


@pytest.mark.parametrize("version", [1, 2, 4])
def test_an_older_store_is_read_as_it_is_and_upgraded_only_by_a_writer(tmp_path: Path,
                                                                       version: int) -> None:
    current = build_store(tmp_path / "current.db")
    old = tmp_path / "old.db"
    shutil.copy(current, old)
    as_layout(old, version)
    before = state(tmp_path)
    for args in (["audit", "{}", "--csv"], ["audit", "{}", "--digest", P4[:8], "--json"],
                 ["audit", "{}", "--provider", "anthropic", "--since", "2026-11-30T00:00:00.1Z"],
                 ["turns", "{}"], ["log", "{}"]):
        expected = CliRunner().invoke(main, [a.format(current) for a in args])
        result = CliRunner().invoke(main, [a.format(old) for a in args])
        assert (result.exit_code, result.stdout, result.stderr) == (
            0, expected.stdout, ""), args
    assert expected.stdout != ""
    assert state(tmp_path) == before
    assert layout(old) == str(version)
    imported = CliRunner().invoke(main, ["import", str(REPLAYS / "p4-gemini.jsonl"), "--db",
                                         str(old)])
    assert imported.exit_code == 0, imported.output
    assert layout(old) == str(SQLITE_STORE_VERSION)


def test_a_store_being_written_is_read_through_its_write_ahead_log(shared: Path) -> None:
    folder = shared / "live"
    folder.mkdir()
    path = folder / "fuseforks.db"
    writer = SqliteStore(path)
    try:
        writer.append(camera_turn("t1", [digest(1)]))
        assert Path(f"{path}-wal").stat().st_size > 0  # not checkpointed: the events are there
        folder.chmod(0o555)
        ((code, out, err),) = as_auditor(path, [["turns", str(path), "--json"]])
        assert (code, err) == (0, "")
        assert [(t["turn_id"], t["events"]) for t in json.loads(out)] == [("t1", 11)]
    finally:
        folder.chmod(0o755)
        writer.close()


def test_a_write_ahead_log_nobody_can_share_is_a_clear_error(shared: Path) -> None:
    """A writer died before checkpointing, and the auditor cannot create the `-shm` file."""
    live, left = shared / "live", shared / "left"
    live.mkdir()
    left.mkdir()
    writer = SqliteStore(live / "fuseforks.db")
    writer.append(camera_turn("t1", [digest(1)]))
    for name in ("fuseforks.db", "fuseforks.db-wal"):
        shutil.copy(live / name, left / name)
    writer.close()
    store = left / "fuseforks.db"
    lock_up(left, store)
    before = state(left)
    ((code, out, err),) = as_auditor(store, [["turns", str(store)]])
    assert (code, out, err.splitlines()) == (1, "", [
        f"Error: {store}: cannot read the store without writing: its write-ahead log "
        "(fuseforks.db-wal) is shared through fuseforks.db-shm, which this user cannot open or "
        f"create; ask the store's owner to run `sqlite3 {store} 'PRAGMA wal_checkpoint(TRUNCATE)'` "
        "(unable to open database file)"])
    assert state(left) == before


def test_a_read_only_store_follows_a_writer_that_checkpoints_under_it(tmp_path: Path) -> None:
    """Opened immutable, the reader notices the main file changed and reads it afresh."""
    path = tmp_path / "fuseforks.db"
    with SqliteStore(path) as first:
        first.append(camera_turn("t1", [digest(1)]))
    reader = SqliteStore(path, read_only=True)
    assert [t.turn_id for t in reader.turns()] == ["t1"]
    with SqliteStore(path) as writer:
        writer.append(camera_turn("t2", [digest(2)], start="2026-11-30T09:00:00.000Z"))
    assert not Path(f"{path}-wal").exists()  # checkpointed into the main file, which changed
    assert [t.turn_id for t in reader.turns()] == ["t1", "t2"]
    assert len(reader.read("t2")) == 11
    reader.close()


def test_a_read_only_store_refuses_to_append(tmp_path: Path) -> None:
    path = tmp_path / "fuseforks.db"
    SqliteStore(path).close()
    with SqliteStore(path, read_only=True) as reader, pytest.raises(
            Exception, match=f"^{path}: opened read-only; nothing was changed$"):
        reader.append(camera_turn("t1", [digest(1)]))
    assert os.path.exists(path)
