"""What the trace tests share: recorded turns from replays/, edited copies of them, and spans as
the OpenTelemetry SDK finishes them (an in-memory exporter), in a form that compares exactly."""

from __future__ import annotations

import gzip
import hashlib
import socket
import threading
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEvent
from fuseforks.stores.jsonl import group_turns, read_stream
from fuseforks.traces import turn_spans
from fuseforks.traces.otel import emit

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


def trace_of(turn_id: str) -> str:
    """The documented trace id of a turn: SHA-256("fuseforks.trace", turn id), 16 bytes."""
    return hashlib.sha256(b"fuseforks.trace\x00" + turn_id.encode()).hexdigest()[:32]


def span_of(turn_id: str, seq: int) -> str:
    """The documented span id of the span an event opens: SHA-256("fuseforks.span", turn id,
    seq), 8 bytes."""
    return hashlib.sha256(f"fuseforks.span\x00{turn_id}\x00{seq}".encode()).hexdigest()[:16]


def recorded(name: str) -> list[Envelope]:
    """The one turn of `replays/{name}.jsonl`."""
    (turn,) = group_turns(read_stream(REPLAYS / f"{name}.jsonl")).values()
    return turn


def cut_and_continue(envelopes: Sequence[Envelope], last_seq: int,
                     *events: tuple[str, TurnEvent]) -> list[Envelope]:
    """The turn up to `last_seq`, then `events` (each with its `at`), numbered on."""
    kept = [e for e in envelopes if e.seq <= last_seq]
    turn_id = kept[0].turn_id
    return kept + [Envelope(turn_id=turn_id, seq=last_seq + n, at=at, event=event)
                   for n, (at, event) in enumerate(events, start=1)]


class InMemory:
    """An SDK tracer provider whose spans end in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())


def finished(envelopes: Iterable[Envelope], *, capture_content: bool = False
             ) -> list[ReadableSpan]:
    """The SDK's finished spans of a recorded turn."""
    memory = InMemory()
    emit(turn_spans(envelopes, capture_content=capture_content), memory.provider)
    return memory.spans


def shape(spans: Iterable[ReadableSpan]) -> list[dict[str, Any]]:
    """Everything a tracing tool shows of each span: per trace, the turn's span first, then the
    others in the order their events opened them (`emit` ends them in the reverse order, so the
    exporter saw them so)."""
    traces: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        traces.setdefault(span.context.trace_id, []).append(span)
    rows = []
    for span in [s for finished in traces.values() for s in reversed(finished)]:
        rows.append({
            "name": span.name,
            "trace_id": f"{span.context.trace_id:032x}",
            "span_id": f"{span.context.span_id:016x}",
            "parent": f"{span.parent.span_id:016x}" if span.parent else None,
            "kind": span.kind.name,
            "start": span.start_time,
            "end": span.end_time,
            "status": (span.status.status_code.name, span.status.description),
            "attributes": dict(span.attributes or {}),
            "events": [(e.name, e.timestamp, dict(e.attributes or {})) for e in span.events],
        })
    return rows


def strings(spans: Iterable[ReadableSpan]) -> list[str]:
    """Every string value of every attribute, span event attribute and status of `spans`."""
    found: list[str] = []

    def add(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, tuple | list):
            for item in value:
                add(item)

    for span in spans:
        add(span.name)
        add(span.status.description or "")
        for value in (span.attributes or {}).values():
            add(value)
        for event in span.events:
            for value in (event.attributes or {}).values():
                add(value)
    return found


class Receiver:
    """A small OTLP/HTTP receiver on 127.0.0.1: it answers `POST /v1/traces` with `status` and
    keeps each body, decoded with the official protobuf message."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[ExportTraceServiceRequest] = []
        self.seen: list[tuple[str, str]] = []  # (path, content type)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver.seen.append((self.path, self.headers.get("Content-Type", "")))
                if self.path == "/v1/traces" and receiver.status == 200:
                    receiver.requests.append(ExportTraceServiceRequest.FromString(body))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def spans(self) -> list[Span]:
        return [span for request in self.requests for resource in request.resource_spans
                for scope in resource.scope_spans for span in scope.spans]


def refused_port() -> int:
    """A port on 127.0.0.1 nothing listens on: a connection to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


class SilentCollector:
    """A TCP port that takes connections and never answers: a collector that hangs."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(connection)

    def __enter__(self) -> SilentCollector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._listener.close()
        for connection in self._held:
            connection.close()


def attributes(values: Iterable[KeyValue]) -> dict[str, Any]:
    """OTLP key-values as a dict of plain values (arrays as tuples)."""

    def plain(value: AnyValue) -> Any:
        kind = value.WhichOneof("value")
        if kind == "array_value":
            return tuple(plain(v) for v in value.array_value.values)
        return getattr(value, kind) if kind else None

    return {item.key: plain(item.value) for item in values}
