"""The OpenTelemetry side: spans handed to a tracer provider, the OTLP/HTTP exporter configured
from the standard environment, and the OTLP/JSON encoding of recorded turns.

This is the only module that imports OpenTelemetry (the `fuseforks[otel]` extra), and nothing
imports it until traces are asked for.

Live equals recorded because ids and times are fixed before a span exists: each span is started
through the provider's own tracer — so the provider's sampler, resource, limits and span
processors apply as to any other span — with `start_time` and `end_time` from the events and a
scripted id generator on that tracer (a tracer of its own, made for each turn, never the
provider's) that hands out the trace and span ids the projection derived. A provider that is not
the SDK's gets the same spans with ids of its own choosing.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Tracer, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from fuseforks.core.errors import FuseforksError
from fuseforks.traces.types import TraceSpan

_log = logging.getLogger("fuseforks.traces")

SCOPE = "fuseforks"
try:
    SCOPE_VERSION = version("fuseforks")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    SCOPE_VERSION = ""
DEFAULT_SERVICE = "fuseforks"
DEFAULT_ENDPOINT = "http://localhost:4318"
PROTOCOL = "http/protobuf"

_KINDS = {"internal": trace_api.SpanKind.INTERNAL, "client": trace_api.SpanKind.CLIENT}


class _ScriptedIds(IdGenerator):
    """Hands out the ids set just before each span is started."""

    def __init__(self) -> None:
        self.trace_id = 0
        self.span_id = 0

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id

    def is_trace_id_random(self) -> bool:
        return False  # derived from the turn id: fixed, not random


def emit(spans: Sequence[TraceSpan], provider: Any) -> None:
    """Start and end `spans` (parents before children, as `turn_spans` orders them) through
    `provider` (an OpenTelemetry `TracerProvider`), at their recorded times."""
    tracer = provider.get_tracer(SCOPE, SCOPE_VERSION)
    ids = _ScriptedIds()
    if isinstance(tracer, Tracer):
        tracer.id_generator = ids
    started: dict[int, trace_api.Span] = {}
    for record in spans:
        ids.trace_id, ids.span_id = record.trace_id, record.span_id
        parent = started.get(record.parent_span_id) if record.parent_span_id else None
        context = trace_api.set_span_in_context(parent) if parent is not None else Context()
        span = tracer.start_span(record.name, context=context, kind=_KINDS[record.kind],
                                 attributes=record.attributes, start_time=record.start_ns)
        for event in record.events:
            span.add_event(event.name, event.attributes, timestamp=event.time_ns)
        if record.status == "error":
            span.set_status(trace_api.Status(trace_api.StatusCode.ERROR,
                                             record.status_description or None))
        started[record.span_id] = span
    for record in reversed(spans):  # children end before their parent
        started[record.span_id].end(end_time=record.end_ns)


# --- the standard environment --------------------------------------------------------------------


def resource(environ: Mapping[str, str] | None = None) -> Resource:
    """The SDK's resource from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; the service is
    `fuseforks` when neither names one."""
    environ = os.environ if environ is None else environ
    found = Resource.create()
    name = str(found.attributes.get("service.name", ""))
    if not environ.get("OTEL_SERVICE_NAME") and name.startswith("unknown_service"):
        found = found.merge(Resource({"service.name": DEFAULT_SERVICE}))
    return found


def traces_endpoint(environ: Mapping[str, str] | None = None) -> str:
    """Where OTLP/HTTP spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
    `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, else the default collector on localhost."""
    environ = os.environ if environ is None else environ
    if endpoint := environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return endpoint
    base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINT
    return base.rstrip("/") + "/v1/traces"


def exporter(environ: Mapping[str, str] | None = None, *,
             timeout: float | None = None) -> OTLPSpanExporter:
    """The OTLP/HTTP exporter; headers, timeout, compression and certificates come from the
    standard `OTEL_EXPORTER_OTLP_*` variables, read by the exporter itself. `timeout`: seconds
    an export may take, retries included, unless the environment says."""
    environ = os.environ if environ is None else environ
    protocol = (environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or PROTOCOL).strip()
    if protocol != PROTOCOL:
        raise FuseforksError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: fuseforks sends traces over OTLP/HTTP "
            f"with protobuf bodies only; set it to {PROTOCOL} (or leave it unset)")
    if any(environ.get(name) for name in _TIMEOUTS):
        timeout = None
    return OTLPSpanExporter(endpoint=traces_endpoint(environ), timeout=timeout)


_TIMEOUTS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
LIVE_TIMEOUT = 1.5
"""Seconds a live export may take, retries included, unless the environment says: short enough
that the last flush at exit fits the agent's bounded wait."""


def provider_from_env(environ: Mapping[str, str] | None = None) -> TracerProvider:
    """A tracer provider that batches spans to the OTLP/HTTP endpoint of the environment; shut it
    down to send what is left."""
    provider = TracerProvider(resource=resource(environ), shutdown_on_exit=False)
    guarded = Guarded(exporter(environ, timeout=LIVE_TIMEOUT), traces_endpoint(environ))
    provider.add_span_processor(BatchSpanProcessor(guarded))
    return provider


RETRY_AFTER = 30.0
"""Seconds a collector that did not take a batch is left alone before the next try."""
_QUIETED = ("opentelemetry.exporter.otlp.common.http",
            "opentelemetry.exporter.otlp.proto.http.trace_exporter",
            "opentelemetry.sdk.trace.export")


class _Quiet(logging.Filter):
    """Drops the exporter's own log records on the thread of a `Guarded` export (and keeps the
    last one's first line as the reason); records of anyone else's exports pass."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(self.local, "active", False):
            self.local.reason = record.getMessage().splitlines()[0][:300]
            return False
        return True


_quiet = _Quiet()
for _name in _QUIETED:
    logging.getLogger(_name).addFilter(_quiet)


class Guarded(SpanExporter):
    """A live exporter that never troubles the user more than once per outage.

    The SDK's exporter retries a collector that is away for up to its timeout and logs every
    attempt, a traceback each; behind a batch processor that costs nothing while turns run, but
    the last flush at exit waits it out. Here a failed export is one warning line, and for
    `RETRY_AFTER` seconds after it batches are dropped at once, so a flush at exit does not wait
    on a collector known to be away."""

    def __init__(self, inner: SpanExporter, endpoint: str) -> None:
        self.inner, self.endpoint = inner, endpoint
        self._away_until = 0.0
        self._warned = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if time.monotonic() < self._away_until:
            return SpanExportResult.FAILURE
        _quiet.local.active, _quiet.local.reason = True, ""
        try:
            result = self.inner.export(spans)
        except Exception as error:  # an exporter's bug must not reach the batch thread's log
            _quiet.local.reason = f"{type(error).__name__}: {error}"
            result = SpanExportResult.FAILURE
        finally:
            _quiet.local.active = False
        if result is SpanExportResult.SUCCESS:
            self._away_until, self._warned = 0.0, False
            return result
        self._away_until = time.monotonic() + RETRY_AFTER
        if not self._warned:
            self._warned = True
            reason = f" ({_quiet.local.reason})" if _quiet.local.reason else ""
            _log.warning("traces: the collector at %s did not take the spans%s; spans are "
                         "dropped while it is away", self.endpoint, reason)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


# --- recorded turns --------------------------------------------------------------------------------


class _Collector(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


class Recorded:
    """Turns' spans as the SDK's finished spans, every one kept (no sampling), with the
    environment's resource: what a live provider configured the same way would have sent."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._collector = _Collector()
        self._provider = TracerProvider(resource=resource(environ), sampler=ALWAYS_ON,
                                        shutdown_on_exit=False)
        self._provider.add_span_processor(SimpleSpanProcessor(self._collector))

    def finished(self, spans: Sequence[TraceSpan]) -> list[ReadableSpan]:
        self._collector.spans = []
        emit(spans, self._provider)
        return self._collector.spans

    def close(self) -> None:
        self._provider.shutdown()


_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(value: Any) -> None:
    """OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping writes base64."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _ID_FIELDS and isinstance(item, str):
                value[key] = base64.b64decode(item).hex()
            else:
                _hex_ids(item)
    elif isinstance(value, list):
        for item in value:
            _hex_ids(item)


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """One `ExportTraceServiceRequest` in the OTLP/JSON encoding, on one line: lowerCamelCase
    field names, enums as integers, ids as hex, 64-bit integers as decimal strings."""
    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    _hex_ids(document)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def otlp_json_lines(turns: Iterable[Sequence[TraceSpan]],
                    environ: Mapping[str, str] | None = None) -> Iterator[str]:
    """One OTLP/JSON line per turn (the OpenTelemetry file-exporter layout, which the
    Collector's `otlpjsonfile` receiver reads)."""
    recorded = Recorded(environ)
    try:
        for spans in turns:
            if spans:
                yield otlp_json(recorded.finished(spans))
    finally:
        recorded.close()


def otlp_protobuf(turns: Iterable[Sequence[TraceSpan]],
                  environ: Mapping[str, str] | None = None) -> bytes:
    """Every turn's spans as one `ExportTraceServiceRequest` in the protobuf encoding: what
    collectors and OpenTelemetry consumers take (`POST /v1/traces` with `Content-Type:
    application/x-protobuf`), which some of them (Arize Phoenix) require."""
    recorded = Recorded(environ)
    try:
        finished = [span for spans in turns if spans for span in recorded.finished(spans)]
    finally:
        recorded.close()
    return bytes(encode_spans(finished).SerializeToString())


class Sender:
    """Recorded turns to the OTLP/HTTP endpoint of the environment, one export request per
    turn, each answered before the next is sent."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.endpoint = traces_endpoint(environ)
        self._exporter = exporter(environ)
        self._recorded = Recorded(environ)

    def send(self, spans: Sequence[TraceSpan]) -> bool:
        return self._exporter.export(self._recorded.finished(spans)) is SpanExportResult.SUCCESS

    def close(self) -> None:
        self._exporter.shutdown()
        self._recorded.close()
