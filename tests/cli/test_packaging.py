"""What `make demo` leaves behind and how it installs: the files it writes are ignored by git, and
the project metadata uses the license form setuptools no longer warns about, and the wheel
carries the files the console serves."""

from __future__ import annotations

import re
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


_INDEX_NOISE = re.compile(r"WARNING: Location '.*' is ignored: it is neither a file nor a "
                          r"directory\.")
"""What pip says of an index folder its configuration names and this machine lacks."""


def test_make_demo_installs_fuseforks_without_a_warning(tmp_path: Path) -> None:
    """The install line `make demo` runs (only fuseforks itself: `--no-deps`) prints nothing."""
    venv = tmp_path / "venv"
    made = processes.run(["make", f"VENV={venv}", f"PYTHON={sys.executable}", f"{venv}/bin/python"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr  # the environment as `make demo` makes it
    planned = processes.run(["make", "-n", f"VENV={venv}", f"{venv}/.installed"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert planned.returncode == 0, planned.stderr
    (install,) = [line for line in planned.stdout.splitlines() if " pip install " in line]
    done = processes.run(["sh", "-c", f"{install} --no-deps"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if not _INDEX_NOISE.fullmatch(line)]
    assert (said, done.stdout) == ([], "")
