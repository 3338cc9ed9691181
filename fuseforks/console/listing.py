"""The turns page: every turn's summary, newest first, filtered and a page at a time.

A summary is the fold `fuseforks turns` prints (`fuseforks.projections.summary`), and folding
it needs the whole turn. So the index keeps the summaries it has folded between pages and folds a
turn again only when its record grew (its event count changed): listing a large store reads the
store's turn list and the turns of one page, and a filter on what only the events say (wire,
model, stop, conversation) reads each turn once, the first time it is asked for.
"""

from __future__ import annotations

import threading

import msgspec

from fuseforks.console.record import Reader
from fuseforks.events.types import TurnNotStarted, TurnStarted
from fuseforks.projections.audit import at_key
from fuseforks.projections.summary import TurnSummary, turn_summary
from fuseforks.stores.store import TurnInfo

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

    @property
    def reads_events(self) -> bool:
        return any(v is not None for v in (self.wire, self.model, self.stop, self.conversation))

    def keeps_start(self, info: TurnInfo) -> bool:
        if self.since is None and self.until is None:
            return True
        at = at_key(info.first_at)
        return at is not None and (self.since is None or at >= self.since) and (
            self.until is None or at < self.until)

    def keeps(self, listed: Listed) -> bool:
        summary = listed.summary
        return ((self.wire is None or summary.wire == self.wire)
                and (self.model is None or summary.model == self.model)
                and (self.stop is None or summary.stop == self.stop)
                and (self.conversation is None
                     or listed.conversation.startswith(self.conversation)))


class Listed(msgspec.Struct, frozen=True, kw_only=True):
    summary: TurnSummary
    conversation: str
    """The turn's conversation id; empty for a turn outside any conversation."""


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    rows: list[Listed]
    matching: int
    """Turns that match the filter, on every page."""
    stored: int
    """Turns in the record."""
    page: int
    pages: int


class TurnIndex:
    """Summaries of the turns seen so far, kept between pages. Safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, tuple[int, Listed]] = {}
        """turn id -> (its event count when folded, its summary)."""

    def page(self, reader: Reader, infos: list[TurnInfo], where: TurnFilter, page: int = 1,
             size: int = PAGE_SIZE) -> Listing:
        """Page `page` (from 1) of the turns `where` keeps, newest first (by start); `infos`:
        the reader's turns, oldest first."""
        newest_first = [info for info in reversed(infos) if where.keeps_start(info)]
        if where.reads_events:
            matching = [listed for listed in self._listed(reader, newest_first)
                        if where.keeps(listed)]
            pages = max(1, -(-len(matching) // size))
            page = min(max(page, 1), pages)
            rows = matching[(page - 1) * size: page * size]
            count = len(matching)
        else:
            pages = max(1, -(-len(newest_first) // size))
            page = min(max(page, 1), pages)
            rows = self._listed(reader, newest_first[(page - 1) * size: page * size])
            count = len(newest_first)
        return Listing(rows=rows, matching=count, stored=len(infos), page=page, pages=pages)

    def _listed(self, reader: Reader, infos: list[TurnInfo]) -> list[Listed]:
        with self._lock:
            known = dict(self._known)
        listed = []
        folded: dict[str, tuple[int, Listed]] = {}
        for info in infos:
            kept = known.get(info.turn_id)
            if kept is None or kept[0] != info.events:
                envelopes = reader.read(info.turn_id)
                if not envelopes:  # gone between the list and the read: not listed
                    continue
                started = envelopes[0].event
                kept = (len(envelopes), Listed(
                    summary=turn_summary(envelopes),
                    conversation=started.conversation_id
                    if isinstance(started, TurnStarted | TurnNotStarted) else ""))
                folded[info.turn_id] = kept
            listed.append(kept[1])
        if folded:
            with self._lock:
                self._known.update(folded)
        return listed
