"""The read model: the rows every reader shows, folded from the events as they are recorded.

Where each image a request carried went and what became of the request (`RequestImage`,
`RequestOutcome`: together a `DeliveryRow`), each image a gateway session sent its client
(`ClientDeliveryRow`), where each kept image came from (`OriginRow`), one summary per turn or
session (`TurnSummary`), and which turns name which image (`DigestTurn`, the index an audit by
digest starts from). A store with tables writes them in the transaction that writes the events
they derive from (`fuseforks.stores.read_tables`), so the audit, `turns`, the console and an SQL
user (the `sqlite-utils` CLI, Datasette, `psql`) read rows and never derive them again; a record
without tables — a JSON Lines stream, memory — folds the same rows here.

A delivery is kept in its parts because its parts change at different times: the images a
request carried never change, its outcome settles once, and how its turn ended is the turn's
summary's. So a request's images are written once, not again when it is answered and again when
its turn ends; the audit reads them joined (`DeliveryRow`).

The fold is incremental: `evolve_rows` takes one envelope of a turn, in seq order, and
`changed_rows` says which rows a few more envelopes added or changed, so a store writes only
those. `READ_MODEL_VERSION` names the fold: when it changes, a store whose rows an older fold
wrote builds them again from its events.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from fuseforks.events.codec import Envelope
from fuseforks.events.types import ImagesNormalized, RequestSent, ResultSent, ToolCalled
from fuseforks.projections.audit import OriginRow, origins_of
from fuseforks.projections.deliveries import (
    ClientDeliveryRow,
    RequestImage,
    RequestOutcome,
    client_rows,
    images_of,
    outcome_of,
)
from fuseforks.projections.summary import SummaryState, TurnSummary, evolve_summary, summary_of

READ_MODEL_VERSION = 1
"""The version of the folds the rows come from. Raise it with any change to what a row holds or
how it is derived: every store then builds its rows again from its events."""

_READ_HERE = frozenset({"ToolCalled", "ImagesNormalized", "ResultSent", "RequestSent"})


class DigestTurn(msgspec.Struct, frozen=True, kw_only=True):
    """An image the turn (or session) names: produced, carried or sent to a client."""

    digest: str
    turn_id: str


class TurnRows(msgspec.Struct, frozen=True, kw_only=True):
    """The read model's fold over one turn's (or session's) envelopes."""

    summary: SummaryState = SummaryState()
    calls: dict[str, ToolCalled] = {}
    """Call id -> its `ToolCalled` (an origin names the tool and its server)."""
    origins: tuple[OriginRow, ...] = ()
    client: tuple[ClientDeliveryRow, ...] = ()
    digests: tuple[str, ...] = ()
    """The images the turn names, each once, in the order it first named them."""
    last_seq: int = 0


def _named(state: TurnRows, digests: Iterable[str]) -> tuple[str, ...]:
    new = [d for d in dict.fromkeys(digests) if d not in state.digests]
    return state.digests + tuple(new) if new else state.digests


def evolve_rows(state: TurnRows, envelope: Envelope) -> TurnRows:
    replace = msgspec.structs.replace
    event = envelope.event
    state = replace(state, summary=evolve_summary(state.summary, envelope),
                    last_seq=envelope.seq)
    if envelope.kind not in _READ_HERE:
        return state
    match event:
        case ToolCalled():
            return replace(state, calls={**state.calls, event.call_id: event})
        case RequestSent():
            return replace(state, digests=_named(state, (d.digest for d in event.images)))
        case ImagesNormalized():
            origins = origins_of(envelope, event, state.calls.get(event.call_id))
            return replace(state, origins=state.origins + tuple(origins),
                           digests=_named(state, (o.digest for o in origins)))
        case ResultSent():
            return replace(state, client=state.client + tuple(client_rows(envelope, event)),
                           digests=_named(state, event.images))
        case _:
            return state


def fold_rows(envelopes: Iterable[Envelope], state: TurnRows | None = None) -> TurnRows:
    """`state` (a turn's rows so far; none: a new turn) with `envelopes` of that turn folded in."""
    state = state or TurnRows()
    for envelope in envelopes:
        state = evolve_rows(state, envelope)
    return state


class ReadRows(msgspec.Struct, frozen=True, kw_only=True):
    """Rows of the read model, of one turn or of many, as the tables hold them."""

    summaries: list[TurnSummary] = []
    request_images: list[RequestImage] = []
    request_outcomes: list[RequestOutcome] = []
    client_deliveries: list[ClientDeliveryRow] = []
    origins: list[OriginRow] = []
    image_index: list[DigestTurn] = []

    def extend(self, other: ReadRows) -> None:
        for field in self.__struct_fields__:
            getattr(self, field).extend(getattr(other, field))


def changed_rows(before: TurnRows, after: TurnRows) -> ReadRows:
    """The rows of `after` that are new or changed since `before` (the same turn's fold a few
    events earlier, or the empty fold): its summary; the images of each new request; the outcome
    of each request with images that is new or changed (answered, refused, stripped); the
    origins, client deliveries and images named that were added. Rows are never taken away."""
    old, new = before.summary.deliveries, after.summary.deliveries
    fresh = len(old.requests)
    changed = [(index, request) for index, request in enumerate(new.requests)
               if request.sent.images and (index >= fresh or request is not old.requests[index])]
    return ReadRows(
        summaries=[summary_of(after.summary)],  # its count of events moves with every append
        request_images=[image for index, request in changed if index >= fresh
                        for image in images_of(new, request)],
        request_outcomes=[outcome_of(new, request) for _, request in changed],
        client_deliveries=list(after.client[len(before.client):]),
        origins=list(after.origins[len(before.origins):]),
        image_index=[DigestTurn(digest=d, turn_id=after.summary.turn_id)
                     for d in after.digests[len(before.digests):]])


def read_rows(history: Iterable[Envelope]) -> ReadRows:
    """Every row of the given envelopes (one turn or many, each turn in seq order)."""
    turns: dict[str, TurnRows] = {}
    for envelope in history:
        turns[envelope.turn_id] = evolve_rows(turns.get(envelope.turn_id, TurnRows()), envelope)
    rows = ReadRows()
    for state in turns.values():
        rows.extend(changed_rows(TurnRows(), state))
    return rows
