"""Spans of live turns: a bus subscriber that emits each turn's spans when the turn ends (and
each gateway session's when the session ends).

It keeps the envelopes of each running turn and, at `TurnEnded`, projects them with
`turn_spans` — the same function a recorded turn goes through — and hands the spans to the tracer
provider off the event loop. A turn whose record has no end (the process died) sends nothing
live; `fuseforks export --format otlp-json` shows it as cut.

Tracing is on when the `Agent` is given a `tracer_provider`, or when the standard environment
names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
and the OpenTelemetry packages are installed (`fuseforks[otel]`). It never stops or delays a turn:
a missing package or an unsupported protocol is one warning; the environment's spans go through
the process's one export (`otel.LiveExport`: a bounded queue sent in the background), which
neither a turn nor an agent's close waits for; the process's exit waits for its last spans at
most `otel.EXIT_WAIT` seconds, and a collector that does not take them is one warning line per
outage.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio.to_thread

from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.events.types import SessionEnded, TurnEnded
from fuseforks.traces.spans import capture_content as content_switch
from fuseforks.traces.spans import turn_spans

if TYPE_CHECKING:
    from fuseforks.traces.otel import LiveExport

_log = logging.getLogger("fuseforks.traces")


class TracerProviderLike(Protocol):
    """An OpenTelemetry `TracerProvider` (the SDK's, for spans with fuseforks' ids)."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any: ...


class SpanSubscriber:
    """A bus subscriber sending each ended turn's spans to `tracer_provider`.

    `capture_content`: attach prompts, answers and tool bodies; by default the conventions'
    switch `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` decides. A provider given is its
    owner's: the subscriber never shuts it down."""

    name = "traces"

    def __init__(self, tracer_provider: TracerProviderLike, *,
                 capture_content: bool | None = None) -> None:
        self.provider = tracer_provider
        self.capture_content = content_switch() if capture_content is None else capture_content
        self._turns: dict[str, list[Envelope]] = {}
        self._export: LiveExport | None = None

    @classmethod
    def for_export(cls, export: LiveExport) -> SpanSubscriber:
        """A subscriber handing its spans to the process's export of the environment."""
        subscriber = cls(export.provider)
        subscriber._export = export
        return subscriber

    async def handle(self, batch: Sequence[Envelope]) -> None:
        ended = []
        for envelope in batch:
            self._turns.setdefault(envelope.turn_id, []).append(envelope)
            if isinstance(envelope.event, TurnEnded | SessionEnded):
                ended.append(self._turns.pop(envelope.turn_id))
        if not ended:
            return
        from fuseforks.traces.otel import emit  # OpenTelemetry: only once there is a span

        for envelopes in ended:
            spans = turn_spans(envelopes, capture_content=self.capture_content)
            if self._export is not None:
                await anyio.to_thread.run_sync(self._export.emit, spans)
            else:
                await anyio.to_thread.run_sync(emit, spans, self.provider)

    @property
    def open_turns(self) -> int:
        return len(self._turns)


def configured(environ: Mapping[str, str] | None = None) -> bool:
    """The standard environment asks for traces over OTLP."""
    environ = os.environ if environ is None else environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
    if "otlp" not in exporters.split(","):
        return False
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
                or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def live_subscriber(tracer_provider: TracerProviderLike | None = None) -> SpanSubscriber | None:
    """The span subscriber of an agent: for the given provider, else for the environment's OTLP
    endpoint; None when traces are not asked for or cannot be sent."""
    if tracer_provider is not None:
        return SpanSubscriber(tracer_provider)
    if not configured():
        return None
    try:
        from fuseforks.traces.otel import live_export
    except ImportError as error:
        _log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry packages are not "
                     "installed (%s): no traces; install fuseforks[otel]", error)
        return None
    try:
        export = live_export()
    except FuseforksError as error:
        _log.warning("no traces: %s", error)
        return None
    return SpanSubscriber.for_export(export)
