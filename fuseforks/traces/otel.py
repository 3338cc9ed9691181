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

Live turns of the standard environment go through the process's one `LiveExport`: the SDK's
batch processor with a bounded queue, sending in the background, which neither a turn nor an
agent's close waits for; the process's exit waits for the last spans at most `EXIT_WAIT`
seconds, and a collector that is down is one warning line per outage. Its docstring says what
happens to the spans then.
"""

from __future__ import annotations

import atexit
import base64
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import requests
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace as trace_api
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, Tracer, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from requests.adapters import HTTPAdapter
from requests.models import PreparedRequest, Response
from urllib3.exceptions import NewConnectionError

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


def exporter(environ: Mapping[str, str] | None = None, *, timeout: float | None = None,
             session: requests.Session | None = None) -> OTLPSpanExporter:
    """The OTLP/HTTP exporter; headers, timeout, compression and certificates come from the
    standard `OTEL_EXPORTER_OTLP_*` variables, read by the exporter itself. `timeout`: seconds
    an export may take, retries included, unless the environment says. `session`: the HTTP
    session its requests go through."""
    environ = os.environ if environ is None else environ
    protocol = (environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or PROTOCOL).strip()
    if protocol != PROTOCOL:
        raise FuseforksError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: fuseforks sends traces over OTLP/HTTP "
            f"with protobuf bodies only; set it to {PROTOCOL} (or leave it unset)")
    if any(environ.get(name) for name in _TIMEOUTS):
        timeout = None
    return OTLPSpanExporter(endpoint=traces_endpoint(environ), timeout=timeout, session=session)


_TIMEOUTS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
_CREDENTIALS = ("OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
                "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER")


# --- live turns: the process's export --------------------------------------------------------------

LIVE_TIMEOUT = 2.0
"""Seconds a live export may take, retries included, unless `OTEL_EXPORTER_OTLP_TIMEOUT` (or
`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`) says: it runs in the background, so it only bounds how long
one batch holds the next."""
SCHEDULE_DELAY = 0.5
"""Seconds ended spans wait to be sent with others, unless `OTEL_BSP_SCHEDULE_DELAY` says (in
milliseconds): a turn's trace shows up within about this long of its end."""
QUEUE_SIZE = 2048
"""Spans waiting to be sent at most, unless `OTEL_BSP_MAX_QUEUE_SIZE` says; beyond, the oldest
are dropped (and counted)."""
BATCH_SIZE = 512
"""Spans per export request at most, unless `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` says."""
EXIT_WAIT = 0.5
"""Seconds the process's exit waits for its last spans, unless `OTEL_BSP_EXPORT_TIMEOUT` says
(in milliseconds); it does not wait at all for a collector nothing could connect to."""
RETRY_AFTER = 30.0
"""Seconds a collector that did not take a batch is left alone before the next try."""
REPLAY = "the turns are on record: `fuseforks replay --otlp` sends them"

_QUIETED = ("opentelemetry.exporter.otlp.common.http",
            "opentelemetry.exporter.otlp.proto.http.trace_exporter",
            "opentelemetry.sdk._shared_internal",
            "opentelemetry.sdk.trace.export")


class _Quiet(logging.Filter):
    """Drops the SDK's own log records (each retry, each dropped span, a traceback each) on a
    thread that is handing spans to, or exporting them for, a `LiveExport`: it says what went
    wrong itself, once. Records of anyone else's spans pass."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self.local, "active", False)

    @contextmanager
    def active(self) -> Iterator[None]:
        before = getattr(self.local, "active", False)
        self.local.active = True
        try:
            yield
        finally:
            self.local.active = before


_quiet = _Quiet()
for _name in _QUIETED:
    logging.getLogger(_name).addFilter(_quiet)


def _setting(environ: Mapping[str, str], name: str, default: float) -> float:
    """A positive number from the environment, else `default`."""
    try:
        value = float(environ.get(name, "") or default)
    except ValueError:
        return default
    return value if value > 0 else default


class LiveExport:
    """The spans of this process's live turns on their way to the OTLP/HTTP endpoint of the
    environment, and what the collector did with them.

    The SDK's `BatchSpanProcessor` does the work: a span handed over joins a bounded queue
    (`QUEUE_SIZE`) and a thread of its own sends it within `SCHEDULE_DELAY`, in batches, each
    export bounded by `LIVE_TIMEOUT`; a turn never waits on any of it. When the collector is
    down:

    - a batch it does not take is dropped, and for `RETRY_AFTER` seconds the next ones are
      dropped at once; then it is tried again;
    - spans beyond the queue are dropped, the oldest first;
    - the process's exit (`close_live_exports`, run at exit) waits for the last spans at most
      `EXIT_WAIT` seconds — not at all once a connection to the collector was refused or its
      host not found — and drops the rest;
    - one warning line per outage (until the collector takes a batch again) names the endpoint
      and the cause: the connection refused, no answer within the timeout, the HTTP status it
      answered. The SDK's own log lines about it (each retry, each dropped span) are dropped.

    Nothing of the record is lost: the spans are derived from the recorded events, so `fuseforks
    replay --otlp` sends any turn again. `ended`, `sent` and `dropped` count the spans handed to
    the export, taken by the collector, and dropped after a failed export; `lost` is every span
    not taken (a queue that overflowed included)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        environ = os.environ if environ is None else environ
        self.endpoint = traces_endpoint(environ)
        self.exit_wait = _setting(environ, "OTEL_BSP_EXPORT_TIMEOUT", EXIT_WAIT * 1000) / 1000
        self.queue_size = int(_setting(environ, "OTEL_BSP_MAX_QUEUE_SIZE", QUEUE_SIZE))
        batch_size = min(int(_setting(environ, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", BATCH_SIZE)),
                         self.queue_size)
        self.batch_size = batch_size
        self.timeout = next((float(environ[name]) for name in _TIMEOUTS
                             if _setting(environ, name, 0) > 0), LIVE_TIMEOUT)
        self.ended = self.sent = self.dropped = 0
        self._changed = threading.Condition()
        self._warned = False
        self._away_until = 0.0
        self._cause = ""  # the last failed attempt's
        self._refused = False  # the last attempt made no connection
        self._exporting = False
        self._closed = False
        self._closing: threading.Thread | None = None
        session: requests.Session | None = None
        if not any(environ.get(name) for name in _CREDENTIALS):  # else the SDK loads theirs
            session = requests.Session()
            attempts = _Attempts(self)
            session.mount("http://", attempts)
            session.mount("https://", attempts)
        inner = exporter(environ, timeout=LIVE_TIMEOUT, session=session)
        self.provider = TracerProvider(resource=resource(environ), shutdown_on_exit=False)
        self.provider.add_span_processor(BatchSpanProcessor(
            _Guarded(inner, self), max_queue_size=self.queue_size,
            schedule_delay_millis=_setting(environ, "OTEL_BSP_SCHEDULE_DELAY",
                                           SCHEDULE_DELAY * 1000),
            max_export_batch_size=batch_size))
        self.provider.add_span_processor(_Counted(self))

    @property
    def lost(self) -> int:
        return self.ended - self.sent

    def emit(self, spans: Sequence[TraceSpan]) -> None:
        """Hand one turn's spans over (they are sent in the background)."""
        with _quiet.active():
            emit(spans, self.provider)

    # what happened, as the batch thread and the HTTP session see it

    def _ended(self) -> None:
        with self._changed:
            self.ended += 1
            waiting = self.ended - self.sent - self.dropped
        if waiting > self.queue_size + self.batch_size:  # only the queue and a batch wait
            self._warn(f"more than the {self.queue_size} spans the queue holds were waiting",
                       "spans beyond the queue are dropped")

    def _away(self) -> bool:
        return time.monotonic() < self._away_until

    def _taken(self, count: int) -> None:
        with self._changed:
            self.sent += count
            self._away_until, self._warned, self._refused, self._cause = 0.0, False, False, ""
            self._changed.notify_all()

    def _not_taken(self, count: int, *, failed: bool, cause: str = "") -> None:
        with self._changed:
            self.dropped += count
            if failed:
                self._away_until = time.monotonic() + RETRY_AFTER
            cause = cause or self._cause or "the export failed"
            self._changed.notify_all()
        if failed:
            self._warn(cause, "spans are dropped while it is away")

    def _attempt(self, cause: str = "", *, refused: bool = False) -> None:
        """One HTTP request: answered with success (no `cause`), or not."""
        with self._changed:
            self._cause, self._refused = cause, refused
            self._changed.notify_all()

    def _warn(self, cause: str, consequence: str) -> None:
        with self._changed:
            if self._warned:
                return
            self._warned = True
        _log.warning("traces: the collector at %s did not take the spans (%s); %s; %s",
                     self.endpoint, cause, consequence, REPLAY)

    # the process's exit

    def start_closing(self) -> None:
        """Shut the provider down in a thread of its own (a daemon: one left waiting on a
        collector does not hold the exit), sending what is left."""

        with self._changed:  # a refusal before an outage that is over says nothing of now
            if not self._exporting and not self._away():
                self._refused = False

        def shut_down() -> None:
            try:
                self.provider.shutdown()
            finally:
                with self._changed:
                    self._closed = True
                    self._changed.notify_all()

        self._closing = threading.Thread(target=shut_down, name="fuseforks-traces-exit",
                                         daemon=True)
        self._closing.start()

    def finish_closing(self, deadline: float) -> None:
        """Wait until the last spans are taken, or nothing could connect to the collector, or
        `deadline` (monotonic seconds) passed; what is not sent then is dropped, said once."""
        with self._changed:
            self._changed.wait_for(lambda: self._closed or self._refused,
                                   max(0.0, deadline - time.monotonic()))
            closed, refused, cause = self._closed, self._refused, self._cause
            unsent = self.ended - self.sent - self.dropped  # neither taken nor said to be dropped
        if unsent <= 0:
            return
        if closed:  # everything was exported: what is missing overflowed the queue
            cause = f"more than the {self.queue_size} spans the queue holds were waiting"
        elif not refused:
            cause = f"no answer within {self.exit_wait:g} s"
        self._warn(cause, f"{unsent} spans are dropped")


class _Counted(SpanProcessor):
    """Counts the spans handed to the batch processor (the sampled ones, as it does)."""

    def __init__(self, export: LiveExport) -> None:
        self.export = export

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and span.context.trace_flags.sampled:
            self.export._ended()


class _Guarded(SpanExporter):
    """The OTLP exporter, telling its `LiveExport` what became of each batch: taken, not taken,
    or dropped at once while the collector is away."""

    def __init__(self, inner: SpanExporter, export: LiveExport) -> None:
        self.inner, self.live = inner, export

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.live._away():
            self.live._not_taken(len(spans), failed=False)
            return SpanExportResult.FAILURE
        cause = ""
        self.live._exporting = True
        with _quiet.active():
            try:
                result = self.inner.export(spans)
            except Exception as error:  # an exporter's bug must not reach the batch thread's log
                cause, result = f"{type(error).__name__}: {error}", SpanExportResult.FAILURE
            finally:
                self.live._exporting = False
        if result is SpanExportResult.SUCCESS:
            self.live._taken(len(spans))
        else:
            self.live._not_taken(len(spans), failed=True, cause=cause)
        return result

    def shutdown(self) -> None:
        with _quiet.active():
            self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class _Attempts(HTTPAdapter):
    """Every HTTP request of a `LiveExport`'s exporter, its outcome told as it happens: a
    connection refused is known at once, not after the exporter's retries."""

    def __init__(self, export: LiveExport) -> None:
        super().__init__()
        self.export = export

    def send(self, request: PreparedRequest, *args: Any, **kwargs: Any) -> Response:
        try:
            response = super().send(request, *args, **kwargs)
        except Exception as error:
            cause, refused = _failure(error, self.export.timeout)
            self.export._attempt(cause, refused=refused)
            raise
        if 200 <= response.status_code < 300:
            self.export._attempt()
        else:
            self.export._attempt(f"HTTP {response.status_code} {response.reason}".strip())
        return response


def _failure(error: BaseException, timeout: float) -> tuple[str, bool]:
    """What a failed request says in a few words, and whether no connection was made."""
    chain: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo and len(chain) < 16:  # requests wraps urllib3, which wraps the socket's error
        item = todo.pop(0)
        if item is None or any(item is seen for seen in chain):
            continue
        chain.append(item)
        todo += [getattr(item, "reason", None), item.__cause__, item.__context__,
                 *(a for a in item.args if isinstance(a, BaseException))]

    def first(kind: type[BaseException] | tuple[type[BaseException], ...]) -> Any:
        return next((e for e in chain if isinstance(e, kind)), None)

    unconnected = first((requests.exceptions.ConnectTimeout, NewConnectionError)) is not None
    if first(ConnectionRefusedError) is not None:
        return "connection refused", True
    if (host := first(socket.gaierror)) is not None:
        return f"host not found: {host.strerror}", True
    if first(requests.exceptions.ConnectTimeout) is not None:
        return f"no connection within {timeout:g} s", True
    if first(requests.exceptions.ReadTimeout) is not None:
        return f"no answer within {timeout:g} s", False
    if (system := next((e for e in reversed(chain) if isinstance(e, OSError) and e.strerror),
                       None)) is not None:
        return str(system.strerror), unconnected
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:300], unconnected


_exports: dict[tuple[tuple[str, str], ...], LiveExport] = {}
_exports_lock = threading.Lock()
_at_exit: list[bool] = []


def live_export(environ: Mapping[str, str] | None = None) -> LiveExport:
    """The process's export for the OTLP settings of the environment: made once, shared by
    every agent (and gateway) of the process, and closed at its exit."""
    environ = os.environ if environ is None else environ
    key = tuple(sorted((k, v) for k, v in environ.items() if k.startswith("OTEL_")))
    with _exports_lock:
        found = _exports.get(key)
        if found is None:
            found = _exports[key] = LiveExport(environ)
            if not _at_exit:
                atexit.register(close_live_exports)
                _at_exit.append(True)
    return found


def close_live_exports() -> None:
    """The process's exit for its live exports: send the last spans, waiting at most each
    export's `exit_wait` (all at once), and drop the rest — said once."""
    with _exports_lock:
        exports = list(_exports.values())
        _exports.clear()
    started = time.monotonic()
    for export in exports:
        export.start_closing()
    for export in exports:
        export.finish_closing(started + export.exit_wait)


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
