"""Real servers for the worker tests: PostgreSQL (embedded, one per session, a database per
test) and NATS with JetStream (one per test, so streams never leak between tests)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stores_pg.server import Server, fresh_database, server
from tests.workers.nats_server import NatsServer, nats_server


@pytest.fixture(scope="session")
def pg_server() -> Server:
    return server()


@pytest.fixture
def pg_url(pg_server: Server) -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture
def nats() -> Iterator[NatsServer]:
    running = nats_server()
    assert isinstance(running, NatsServer), "these tests restart the server"
    try:
        yield running
    finally:
        running.close()
