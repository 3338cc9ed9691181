"""A store on a read-only file system is said to be on one — not "permission denied", which sends
a user to change modes that cannot help — by the commands that write, and by the store itself.
Reading such a store works as from any other place."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fuseforks.stores.sqlite import SqliteStore
from tests.helpers.mounts import fuseforks_on_read_only, run_on_read_only
from tests.helpers.streams import import_stream

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


@pytest.fixture
def mounted(tmp_path: Path) -> Path:
    """A folder holding a store of one turn (mounted read-only only for the command under test)."""
    folder = tmp_path / "volume"
    folder.mkdir()
    with SqliteStore(folder / "fuseforks.db") as store:
        import_stream(store, REPLAYS / "p4-anthropic.jsonl")
    return folder


def test_the_mount_is_read_only_for_the_command_only(mounted: Path) -> None:
    attempt = run_on_read_only(mounted, "touch", str(mounted / "x"))
    assert attempt.returncode != 0
    assert not (mounted / "x").exists()
    (mounted / "x").touch()  # the test's own view stays writable


@pytest.mark.parametrize("args, said", [
    (["run", "--wire", "anthropic", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
      "--db", "{db}", "hi"], "Error: {db}: cannot write the store (read-only file system)\n"),
    (["import", str(REPLAYS / "p4-xai.jsonl"), "--db", "{db}"],
     "Error: {db}: cannot write the store (read-only file system)\n"),
    (["import", str(REPLAYS / "p4-xai.jsonl"), "--db", "{new}"],
     "Error: {new}: cannot create the store: directory {folder} is on a read-only file system\n"),
    (["demo", "--db", "{new}"],
     "Error: {new}: cannot create the store: directory {folder} is on a read-only file system\n"),
    (["rebuild", "{db}"], "Error: {db}: cannot write the store (read-only file system)\n"),
], ids=["run", "import", "import new", "demo new", "rebuild"])
def test_a_command_that_writes_names_the_read_only_file_system(
        mounted: Path, args: list[str], said: str) -> None:
    names = {"db": str(mounted / "fuseforks.db"), "new": str(mounted / "new.db"),
             "folder": str(mounted)}
    result = fuseforks_on_read_only(mounted, *(a.format(**names) for a in args))
    assert (result.returncode, result.stderr) == (1, said.format(**names))


def test_the_store_opened_for_writing_names_the_read_only_file_system(mounted: Path) -> None:
    program = ("import sys\nfrom fuseforks.stores.sqlite import SqliteStore\n"
               "try:\n    SqliteStore(sys.argv[1])\nexcept Exception as error:\n"
               "    print(error)\n")
    for name in ("fuseforks.db", "new.db"):
        result = run_on_read_only(mounted, sys.executable, "-c", program, str(mounted / name))
        assert result.stdout.startswith(f"{mounted / name}: ")
        assert "read-only file system" in result.stdout, result.stdout


def test_reading_a_store_on_a_read_only_file_system_works(mounted: Path) -> None:
    result = fuseforks_on_read_only(mounted, "turns", str(mounted / "fuseforks.db"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert len(result.stdout.splitlines()) == 2  # the header and the turn
