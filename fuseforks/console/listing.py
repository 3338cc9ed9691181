"""The turns page: every turn's summary, newest first, filtered and a page at a time.

A summary is a row of the read model (`fuseforks.projections.summary`), which an SQL store keeps
beside its events and a stream folds in memory. A page asks the record for its own rows and two
counts, so it costs about the same however many turns the record holds.
"""

from __future__ import annotations

import msgspec

from fuseforks.projections.summary import EVERY_TURN, SummaryFilter, TurnSummary
from fuseforks.stores.store import Record

PAGE_SIZE = 50

TurnFilter = SummaryFilter
"""Which turns the page lists (`SummaryFilter`)."""


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    rows: list[TurnSummary]
    matching: int
    """Turns that match the filter, on every page."""
    stored: int
    """Turns in the record."""
    page: int
    pages: int


def page(record: Record, where: SummaryFilter, number: int = 1,
         size: int = PAGE_SIZE) -> Listing:
    """Page `number` (from 1; a page past the last is the last) of the turns `where` keeps,
    newest first (by start)."""
    stored = record.count_summaries()
    matching = stored if where == EVERY_TURN else record.count_summaries(where)
    pages = max(1, -(-matching // size))
    number = min(max(number, 1), pages)
    rows = record.summaries(where, newest_first=True, offset=(number - 1) * size, limit=size)
    return Listing(rows=rows, matching=matching, stored=stored, page=number, pages=pages)
