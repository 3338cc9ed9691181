"""What the page of one turn shows, gathered from the projections every command uses.

The page is the turn's events in order, grouped by round, each shown as what it records. What
an event alone does not say comes from a projection, never from a fold of the console's own:
the summary and the token totals (`summary`, what `turns` and `replay` print), the log lines
(`log`), each request as the provider received it (`views`, what `replay` prints), where each
image came from and where it went, received or refused and stripped (`audit`), and how long each
request and tool call took and how it ended (the trace spans, `fuseforks.traces.spans`).

A gateway session has the same page: its calls in order, and for each image the client it was
sent to (the client deliveries of the same audit rows) where a turn's names its requests.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImagesCapped,
    ImagesDropped,
    RoundStarted,
    SessionEnded,
    SessionStarted,
    TurnEnded,
    TurnStarted,
)
from fuseforks.projections.audit import ClientDeliveryRow, DeliveryRow, OriginRow, audit_rows
from fuseforks.projections.log import turn_log
from fuseforks.projections.summary import TurnSummary, turn_summary, turn_usage
from fuseforks.projections.views import RequestView, request_views
from fuseforks.traces import conventions
from fuseforks.traces.spans import span_id, turn_spans


@dataclass(frozen=True)
class Timing:
    """A request or a tool call as its trace span saw it: how long, and how it ended."""

    milliseconds: float
    outcome: str


@dataclass(frozen=True)
class Round:
    number: int
    """0 for what comes before the first round (the turn's start)."""
    envelopes: list[Envelope]


@dataclass(frozen=True)
class TurnPage:
    envelopes: list[Envelope]
    summary: TurnSummary
    usage: dict[str, int]
    started: TurnStarted | None
    ended: TurnEnded | None
    session: SessionStarted | None
    """A gateway session's start (its client, transport and profile); None for a turn."""
    session_ended: SessionEnded | None
    rounds: list[Round]
    log: list[str]
    requests: dict[int, RequestView]
    """By the seq of its `RequestSent`."""
    timings: dict[int, Timing]
    """By the seq of the `RequestSent` or `ToolCalled` that opened the span."""
    origins: dict[str, OriginRow]
    """Where each tool image came from, by digest."""
    deliveries: list[DeliveryRow]
    deliveries_by_request: dict[int, list[DeliveryRow]] = field(default_factory=dict)
    deliveries_by_digest: dict[str, list[DeliveryRow]] = field(default_factory=dict)
    capped: dict[str, int] = field(default_factory=dict)
    """Digests the per-request cap took off, with the round it happened in."""
    drops: dict[str, list[ImagesDropped]] = field(default_factory=dict)
    """The images a tool call's result lost, by call id."""
    client_deliveries: list[ClientDeliveryRow] = field(default_factory=list)
    """The images a gateway session sent its client, in order."""
    sent_by_digest: dict[str, list[ClientDeliveryRow]] = field(default_factory=dict)

    @property
    def turn_id(self) -> str:
        return self.summary.turn_id

    @property
    def over(self) -> bool:
        """The record has its end: the turn's, or the gateway session's."""
        return self.ended is not None or self.session_ended is not None


def turn_page(envelopes: list[Envelope]) -> TurnPage:
    """The page of one turn, from its events (at least one) in seq order."""
    turn_id = envelopes[0].turn_id
    audit = audit_rows(envelopes)
    by_request: dict[int, list[DeliveryRow]] = defaultdict(list)
    by_digest: dict[str, list[DeliveryRow]] = defaultdict(list)
    for row in audit.deliveries:
        by_request[row.request_seq].append(row)
        by_digest[row.digest].append(row)
    sent_by_digest: dict[str, list[ClientDeliveryRow]] = defaultdict(list)
    for sent in audit.client_deliveries:
        sent_by_digest[sent.digest].append(sent)
    capped: dict[str, int] = {}
    drops: dict[str, list[ImagesDropped]] = defaultdict(list)
    for envelope in envelopes:
        event = envelope.event
        if isinstance(event, ImagesCapped):
            capped.update(dict.fromkeys(event.removed_digests, event.round))
        elif isinstance(event, ImagesDropped):
            drops[event.call_id].append(event)
    first, last = envelopes[0].event, envelopes[-1].event
    return TurnPage(
        envelopes=envelopes,
        summary=turn_summary(envelopes),
        usage=turn_usage(envelopes),
        started=first if isinstance(first, TurnStarted) else None,
        ended=last if isinstance(last, TurnEnded) else None,
        session=first if isinstance(first, SessionStarted) else None,
        session_ended=last if isinstance(last, SessionEnded) else None,
        rounds=_rounds(envelopes),
        log=turn_log(envelopes),
        requests={view.seq: view for view in request_views(envelopes)},
        timings=_timings(turn_id, envelopes),
        origins={o.digest: o for o in audit.origins},
        deliveries=audit.deliveries,
        deliveries_by_request=dict(by_request),
        deliveries_by_digest=dict(by_digest),
        capped=capped,
        drops=dict(drops),
        client_deliveries=audit.client_deliveries,
        sent_by_digest=dict(sent_by_digest),
    )


def _rounds(envelopes: list[Envelope]) -> list[Round]:
    """The events grouped from one `RoundStarted` to the next; the turn's end closes the last."""
    rounds = [Round(number=0, envelopes=[])]
    for envelope in envelopes:
        if isinstance(envelope.event, RoundStarted):
            rounds.append(Round(number=envelope.event.round, envelopes=[]))
        rounds[-1].envelopes.append(envelope)
    return rounds


def _timings(turn_id: str, envelopes: list[Envelope]) -> dict[int, Timing]:
    opened_by = {span_id(turn_id, e.seq): e.seq for e in envelopes}
    timings = {}
    for span in turn_spans(envelopes):
        if span.parent_span_id is None:
            continue
        outcome = span.attributes.get(conventions.REQUEST_OUTCOME,
                                      span.attributes.get(conventions.TOOL_OUTCOME, ""))
        timings[opened_by[span.span_id]] = Timing(
            milliseconds=(span.end_ns - span.start_ns) / 1e6, outcome=str(outcome))
    return timings
