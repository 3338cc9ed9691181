"""What the SQL base (`fuseforks.stores.sql`) needs to know of an SQL store's language: its
parameter mark, its statements for the contract, and the column types of the read model's
tables."""

from __future__ import annotations

import msgspec


class Dialect(msgspec.Struct, frozen=True, kw_only=True):
    """The statements of one SQL store. Each reading statement returns the columns the base
    decodes: `read` (turn id, after) → seq, version, at, body; `conversation` (conversation id)
    and `of_kinds` (the kinds, `{marks}` standing for one mark per kind) → turn id, seq,
    version, at, body; `tail` (turn id) → the last seq; `turns` → turn id, count, first and last
    time."""

    mark: str
    tables: str
    """The names of the tables of the store's schema, sorted."""
    version: str
    """The layout version stamped in the meta table."""
    rows_version: str
    """The version of the fold the read model's rows were written by, in the meta table."""
    read: str
    prefix: str
    """(turn id, last seq) → seq, version, at, body of the turn's events up to that seq."""
    tail: str
    turns: str
    conversation: str
    conversation_size: str
    """(conversation id) → the number of its turns."""
    of_kinds: str
    text: str
    integer: str
    boolean: str
    """The column types of the read model's tables."""
    turns_naming: str = "{column} IN (SELECT turn_id FROM image_index WHERE digest = {mark})"
    """`column` is one of the turns that name an image (the index's turns, looked up first)."""
    table_options: str = ""
    """What follows a table's definition (SQLite: `WITHOUT ROWID, STRICT`)."""
    since_in_sql: bool = True
    """Whether `since` is compared in SQL; a store that cannot leaves it to
    `AuditFilter.keeps` after the query."""

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)
