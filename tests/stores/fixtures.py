"""The PostgreSQL fixtures every folder that needs a real server imports into its conftest: one
server per session (see `tests.stores.server`), a database of its own for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stores.server import Server, fresh_database, server


@pytest.fixture(scope="session")
def pg_server() -> Server:
    return server()


@pytest.fixture
def pg_url(pg_server: Server) -> Iterator[str]:
    """The URL of a new, empty database, dropped after the test."""
    with fresh_database() as url:
        yield url
