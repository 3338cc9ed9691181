"""Callers of the store depend on the tier they need, and the tiers on nothing that implements
them: the contract module imports no store, and the relay, the leases and the workers import no
store class — they are handed an `OrderedRecord` or an `OrderedStore` (`fuseforks.stores.open`
is where a URL becomes a PostgreSQL store)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fuseforks"
ADAPTERS = {"fuseforks.stores.memory", "fuseforks.stores.sqlite", "fuseforks.stores.postgres",
            "fuseforks.stores.sql", "fuseforks.stores.stream"}
"""The modules that implement the contract."""


def imported(path: Path) -> set[str]:
    """Every module `path` imports, and every name it imports from one (as module.name)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_contract_imports_no_store_that_implements_it() -> None:
    assert imported(PACKAGE / "stores" / "store.py") & ADAPTERS == set()


@pytest.mark.parametrize("module", ["jetstream/relay.py", "jetstream/lease.py",
                                    "workers/worker.py", "workers/watchdog.py"])
def test_the_relay_and_the_workers_name_no_store_class(module: str) -> None:
    names = imported(PACKAGE / module)
    assert names & ADAPTERS == set()
    assert {name for name in names if name.endswith(("Store", "StreamRecord"))
            and not name.endswith(("OrderedStore", "EventStore"))} == set()
