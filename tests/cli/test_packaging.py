"""What `make demo` leaves behind and how it installs: the files it writes are ignored by git, and
the project metadata uses the license form setuptools no longer warns about, and the wheel
carries the files the console serves."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.helpers import processes

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


def test_the_wheel_carries_the_consoles_templates_and_files(tmp_path: Path) -> None:
    """The console serves its pages from files beside its modules; an installed fuseforks must
    have every one of them."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "fuseforks", tree / "fuseforks",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    done = processes.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                          "--wheel-dir", str(tmp_path / "wheel"), str(tree)],
                         capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "wheel").glob("fuseforks-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    console = ROOT / "fuseforks" / "console"
    served = {f"fuseforks/console/{p.relative_to(console)}" for folder in ("templates", "static")
              for p in (console / folder).iterdir()}
    assert served and served <= shipped, sorted(served - shipped)
