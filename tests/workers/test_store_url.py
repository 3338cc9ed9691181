"""A worker tells a PostgreSQL URL from anything else with the stores' own function
(`is_database_url`): a path, or another database's URL, is refused before anything is opened,
and a password in it is never shown."""

from __future__ import annotations

import pytest

from fuseforks.core.errors import FuseforksError
from fuseforks.workers import Worker


@pytest.mark.parametrize(("db", "shown"), [
    ("fuseforks.db", "fuseforks.db"),
    ("sqlite:///var/lib/fuseforks.db", "sqlite:///var/lib/fuseforks.db"),
    ("mysql://me:db-secret-55@db.example.com/agents", "mysql://me:***@db.example.com/agents"),
])
async def test_a_worker_refuses_a_store_that_is_not_a_postgresql_url(db: str, shown: str) -> None:
    worker = Worker(db=db, nats="nats://127.0.0.1:9", say=lambda line: None)
    with pytest.raises(FuseforksError) as caught:
        await worker.run()
    assert str(caught.value) == f"a worker needs a PostgreSQL store URL, not {shown!r}"
