"""Recorded turns as traces, for the commands: one OTLP protobuf export request (`fuseforks
export --format otlp`), OTLP/JSON lines (`fuseforks export --format otlp-json`) and OTLP/HTTP
export requests (`fuseforks replay --otlp`).

The protobuf form is one `ExportTraceServiceRequest` holding every turn's spans: the body a
collector or a consumer such as Arize Phoenix takes at `POST /v1/traces` with `Content-Type:
application/x-protobuf` (Phoenix refuses the JSON encoding).

One JSON document per turn, each on its own line: an `ExportTraceServiceRequest` holding that
turn's spans, in the OTLP/JSON encoding — the layout of OpenTelemetry's file exporter, which the
Collector's `otlpjsonfile` receiver reads and a line of which is a valid body for `POST
/v1/traces` with `Content-Type: application/json`. A record that does not begin with
`TurnStarted` has no spans and no line. Content follows the conventions' switch
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`), as it does live.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from types import ModuleType

import msgspec

from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.traces.spans import TraceSpan, capture_content, turn_spans


def _otel() -> ModuleType:
    try:
        from fuseforks.traces import otel
    except ImportError as error:
        raise FuseforksError(
            f"traces need the OpenTelemetry packages ({error}); install fuseforks[otel]: "
            "pip install 'fuseforks[otel]'") from error
    return otel


def spans_of(turns: Iterable[Sequence[Envelope]]) -> list[list[TraceSpan]]:
    content = capture_content()
    return [turn_spans(envelopes, capture_content=content) for envelopes in turns]


def otlp_json_lines(turns: Iterable[Sequence[Envelope]]) -> Iterator[str]:
    """One OTLP/JSON line per turn that has spans."""
    lines: Iterator[str] = _otel().otlp_json_lines(spans_of(turns))
    return lines


def otlp_protobuf(turns: Iterable[Sequence[Envelope]]) -> tuple[bytes, int]:
    """Every turn's spans as one OTLP protobuf export request, and how many spans it holds."""
    spans = spans_of(turns)
    body: bytes = _otel().otlp_protobuf(spans)
    return body, sum(len(s) for s in spans)


class Sent(msgspec.Struct, frozen=True):
    turn_id: str
    trace_id: str
    spans: int
    accepted: bool


class Sending:
    """Recorded turns to the OTLP/HTTP endpoint the standard environment names."""

    def __init__(self) -> None:
        self._sender = _otel().Sender()
        self.endpoint: str = self._sender.endpoint

    def send(self, turns: Iterable[Sequence[Envelope]]) -> Iterator[Sent]:
        """One export request per turn that has spans, each answered before the next."""
        records = list(turns)
        for envelopes, spans in zip(records, spans_of(records), strict=True):
            if spans:
                yield Sent(envelopes[0].turn_id, f"{spans[0].trace_id:032x}", len(spans),
                           self._sender.send(spans))

    def close(self) -> None:
        self._sender.close()
