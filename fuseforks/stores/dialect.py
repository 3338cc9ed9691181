"""What the SQL base (`fuseforks.stores.sql`) needs to know of an SQL store's language: its
parameter mark, its statements for the contract, and the relations its audit reads."""

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
    read: str
    tail: str
    turns: str
    conversation: str
    conversation_size: str
    """(conversation id) → the number of its turns."""
    of_kinds: str
    origins: str
    """The relation holding the rows of `image_origins`."""
    deliveries: str
    """The relation holding the rows of `image_deliveries`."""
    delivery_columns: str
    """The columns of a `DeliveryRow`, as the deliveries relation gives them."""
    tie: str = ""
    """The order after (at, turn, seq) among the images of one event."""
    since_in_sql: bool = True
    """Whether `since` is compared in SQL; a store that cannot leaves it to
    `AuditFilter.keeps` after the query."""

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)
