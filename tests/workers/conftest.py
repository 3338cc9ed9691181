"""Real servers for the worker tests: PostgreSQL (embedded, one per session, a database per
test) and NATS with JetStream (one per test from the wheel, so streams never leak between tests;
or the one `FUSEFORKS_TEST_NATS` names, its fuseforks streams deleted before each test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stores.fixtures import pg_server, pg_url
from tests.workers.nats_server import Given, NatsServer, nats_server

__all__ = ["pg_server", "pg_url"]


@pytest.fixture
def nats() -> Iterator[NatsServer | Given]:
    running = nats_server()
    if isinstance(running, Given):
        running.clear()
        yield running
        return
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def own_nats() -> Iterator[NatsServer]:
    """A server of this test's own, whatever `FUSEFORKS_TEST_NATS` says: the test restarts it."""
    running = NatsServer()
    try:
        yield running
    finally:
        running.close()
