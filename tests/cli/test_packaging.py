"""What `make demo` leaves behind and how it installs: the files it writes are ignored by git, and
the project metadata uses the license form setuptools no longer warns about."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_files_the_demo_and_run_write_are_ignored_by_git() -> None:
    paths = ["fuseforks.db", "fuseforks.db-wal", "fuseforks.db-shm", "fuseforks.log",
             "tests/fuseforks.log", "docs/fuseforks.db"]
    done = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout.splitlines()) == (0, paths)


def test_the_license_is_an_spdx_expression_for_a_setuptools_that_reads_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"
    assert "setuptools>=77" in project["build-system"]["requires"]
    assert not [c for c in project["project"].get("classifiers", []) if c.startswith("License ::")]
