"""What a store's read model holds, against what the folds make of its events."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from fuseforks.projections.audit import audit_rows
from fuseforks.projections.read_model import ReadRows, read_rows
from fuseforks.stores.read_tables import DELIVERIES, TABLES, TableSpec, values
from fuseforks.stores.sqlite import SqliteStore

Relation = tuple[list[str], Counter[tuple[Any, ...]]]


def rows_of(cursor: Any) -> Relation:
    names = [d[0] for d in cursor.description]
    rows = [tuple(int(v) if isinstance(v, bool) else v for v in row) for row in cursor.fetchall()]
    return names, Counter(rows)


def folded(rows: ReadRows, table: TableSpec) -> Relation:
    return list(table.columns), Counter(tuple(int(v) if isinstance(v, bool) else v for v in row)
                                        for row in values(table, rows))


def in_sqlite(store: SqliteStore, relation: str) -> Relation:
    return rows_of(store.db.execute(f"SELECT * FROM {relation}"))


def in_postgres(url: str, relation: str) -> Relation:
    with psycopg.connect(url) as connection:
        return rows_of(connection.execute(f"SELECT * FROM {relation}".encode()))


def assert_rows_are_the_folds(where: str | Path) -> ReadRows:
    """Every table of the read model of the store at `where` (a PostgreSQL URL or an SQLite
    file), and the view of deliveries, hold exactly the rows the folds make of its events."""
    with SqliteStore(where, read_only=True) if isinstance(where, Path) else _postgres(
            where) as store:
        everything = [e for t in store.turns() for e in store.read(t.turn_id)]
        relation = ((lambda name: in_sqlite(store, name)) if isinstance(store, SqliteStore)
                    else (lambda name: in_postgres(str(where), name)))
        rows = read_rows(everything)
        for table in TABLES:
            assert relation(table.name) == folded(rows, table), table.name
        deliveries = audit_rows(everything).deliveries
        assert relation(DELIVERIES.name) == (list(DELIVERIES.columns), Counter(
            tuple(int(v) if isinstance(v, bool) else v for v in msgspec.structs.astuple(d))
            for d in deliveries))
    return rows


def _postgres(url: str) -> Any:
    from fuseforks.stores.postgres import PostgresStore

    return PostgresStore(url, read_only=True)
