"""The import contracts in pyproject.toml catch each back-edge the codebase once had, and each
import of a store's adapter from outside `fuseforks.stores` (the console once read a stream
through `StreamRecord`, and half the commands took `DatabaseUrl` from the module of SQL text).

Each case copies the package, adds one import that points up the layers (under `TYPE_CHECKING`
where the original did), and runs import-linter on the copy: the contract must break. The
unchanged copy must keep it, so a case cannot pass because the copy is broken.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")

BACK_EDGES = [
    ("events/codec.py", "from fuseforks.projections.log import LogState"),
    ("stores/memory.py", "from fuseforks.bus.bus import Bus"),
    ("projections/views.py", "from fuseforks.wires.registry import get_wire"),
    ("projections/messages.py", "from fuseforks.engine.turn import Turn"),
    ("wires/base.py", "from fuseforks.engine.turn import Turn"),
    ("mcp/hub.py", "from fuseforks.engine.turn import Turn"),
    ("ports/model.py", "from fuseforks.wires.http import ProviderClient"),
    ("core/texts.py", "from fuseforks.images.types import NormalizedImage"),
    ("images/vault.py", "from fuseforks.events.types import ImageMeta"),
    ("engine/turn.py", "from fuseforks.live.model import LiveModel"),
    ("live/model.py", "from fuseforks.demo.offline import run"),
    ("demo/offline.py", "from fuseforks.cli import main"),
    ("console/app.py", "from fuseforks.cli.sources import open_source"),
    ("workers/worker.py", "from fuseforks.console.source import RecordSource"),
    ("stores/sqlite.py", "from fuseforks.console.listing import TurnIndex"),
]
LAYERS = "Layers read top-down"

ADAPTER_IMPORTS = [
    ("console/source.py", "from fuseforks.stores.stream import StreamRecord"),
    ("cli/options.py", "from fuseforks.stores.postgres_sql import EVENTS"),
    ("workers/worker.py", "from fuseforks.stores.postgres import PostgresStore"),
    ("agent/agent.py", "from fuseforks.stores.sqlite import SqliteStore"),
]
STORES = "A store is reached through its contract"


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--config", str(tree / "pyproject.toml")], cwd=tree,
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": str(LINT.parent), "PYTHONPATH": str(tree)})


def copy_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "fuseforks", tree / "fuseforks",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_package_keeps_the_contract(tmp_path: Path) -> None:
    result = lint(copy_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout


def broken_by(tmp_path: Path, module: str, addition: str) -> tuple[str, str]:
    """The verdicts on the layers and on the stores, once `addition` ends `module`'s code in a
    copy of the package: exactly one contract must break."""
    tree = copy_tree(tmp_path)
    path = tree / "fuseforks" / module
    path.write_text(path.read_text() + addition)
    result = lint(tree)
    assert result.returncode == 1, result.stdout
    assert "Contracts: 1 kept, 1 broken." in result.stdout
    return verdict(result.stdout, LAYERS), verdict(result.stdout, STORES)


@pytest.mark.parametrize(("module", "line"), BACK_EDGES, ids=[m for m, _ in BACK_EDGES])
def test_a_back_edge_breaks_the_contract_even_when_type_checking_only(
    tmp_path: Path, module: str, line: str
) -> None:
    addition = f"\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {line}\n"
    assert broken_by(tmp_path, module, addition) == ("BROKEN", "KEPT")


@pytest.mark.parametrize(("module", "line"), ADAPTER_IMPORTS, ids=[m for m, _ in ADAPTER_IMPORTS])
def test_an_adapter_imported_outside_the_stores_breaks_the_store_contract(
    tmp_path: Path, module: str, line: str
) -> None:
    assert broken_by(tmp_path, module, f"\n{line}\n") == ("KEPT", "BROKEN")


def verdict(report: str, contract: str) -> str:
    """What import-linter's report says of the contract whose name starts with `contract`:
    KEPT or BROKEN (the report wraps a long name over lines)."""
    words = " ".join(report.split())
    after = words[words.index(contract):]
    kept, broken = after.find(" KEPT"), after.find(" BROKEN")
    return "BROKEN" if broken >= 0 and (kept < 0 or broken < kept) else "KEPT"
