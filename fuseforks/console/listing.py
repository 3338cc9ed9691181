"""The turns page: every turn's summary, newest first, filtered and a page at a time.

A summary is a row of the read model (`fuseforks.projections.summary`), which an SQL store keeps
beside its events and a stream folds in memory: listing a store reads its summaries, never a
turn's events, so the first page after a new turn costs one read of the summaries.
"""

from __future__ import annotations

import msgspec

from fuseforks.projections.audit import at_key
from fuseforks.projections.summary import TurnSummary

PAGE_SIZE = 50


class TurnFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Which turns the page lists; a field left None matches every turn. `since` and `until` are
    `since_key`s: a turn started at or after `since` and before `until`."""

    wire: str | None = None
    model: str | None = None
    stop: str | None = None
    conversation: str | None = None
    """A conversation id, or the beginning of one."""
    since: str | None = None
    until: str | None = None

    def keeps(self, summary: TurnSummary) -> bool:
        if self.since is not None or self.until is not None:
            at = at_key(summary.started)
            if at is None or (self.since is not None and at < self.since) or (
                    self.until is not None and at >= self.until):
                return False
        return ((self.wire is None or summary.wire == self.wire)
                and (self.model is None or summary.model == self.model)
                and (self.stop is None or summary.stop == self.stop)
                and (self.conversation is None
                     or summary.conversation.startswith(self.conversation)))


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    rows: list[TurnSummary]
    matching: int
    """Turns that match the filter, on every page."""
    stored: int
    """Turns in the record."""
    page: int
    pages: int


def page(summaries: list[TurnSummary], where: TurnFilter, number: int = 1,
         size: int = PAGE_SIZE) -> Listing:
    """Page `number` (from 1) of the turns `where` keeps, newest first (by start); `summaries`:
    the record's, oldest first."""
    matching = [s for s in reversed(summaries) if where.keeps(s)]
    pages = max(1, -(-len(matching) // size))
    number = min(max(number, 1), pages)
    return Listing(rows=matching[(number - 1) * size: number * size], matching=len(matching),
                   stored=len(summaries), page=number, pages=pages)
