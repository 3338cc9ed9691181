"""Spans of live turns: a bus subscriber that emits each turn's spans when the turn ends (and
each gateway session's when the session ends).

It keeps the envelopes of each running turn and, at `TurnEnded`, projects them with
`turn_spans` — the same function a recorded turn goes through — and hands the spans to the tracer
provider off the event loop. A turn whose record has no end (the process died) sends nothing
live; `fuseforks export --format otlp-json` shows it as cut.

Tracing is on when the `Agent` is given a `tracer_provider`, or when the standard environment
names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
and the OpenTelemetry packages are installed (`fuseforks[otel]`). It never stops or delays a turn:
a missing package or an unsupported protocol is one warning; a collector that does not take the
spans is one warning line per outage (`otel.Guarded`), and an agent's exit waits for the last spans
at most `SHUTDOWN_WAIT` seconds.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio.to_thread

from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.events.types import SessionEnded, TurnEnded
from fuseforks.traces.spans import capture_content as content_switch
from fuseforks.traces.spans import turn_spans

_log = logging.getLogger("fuseforks.traces")

SHUTDOWN_WAIT = 2.0
"""Seconds an agent's exit waits for its last spans to be taken."""


class TracerProviderLike(Protocol):
    """An OpenTelemetry `TracerProvider` (the SDK's, for spans with fuseforks' ids)."""

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any: ...


class SpanSubscriber:
    """A bus subscriber sending each ended turn's spans to `tracer_provider`.

    `capture_content`: attach prompts, answers and tool bodies; by default the conventions'
    switch `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` decides. `owned`: the subscriber
    made the provider, and shuts it down (sending what is left) when closed."""

    name = "traces"

    def __init__(self, tracer_provider: TracerProviderLike, *,
                 capture_content: bool | None = None, owned: bool = False) -> None:
        self.provider = tracer_provider
        self.capture_content = content_switch() if capture_content is None else capture_content
        self._owned = owned
        self._turns: dict[str, list[Envelope]] = {}

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
            await anyio.to_thread.run_sync(emit, spans, self.provider)

    @property
    def open_turns(self) -> int:
        return len(self._turns)

    async def aclose(self) -> None:
        """Shut down a provider this subscriber made, sending what is left — waiting for that at
        most `SHUTDOWN_WAIT` seconds: a collector that does not answer must not hold the
        program (the exporter's own timeout may be minutes)."""
        if not self._owned:
            return
        done = threading.Event()

        def shut_down() -> None:
            self._shutdown()
            done.set()

        # A daemon thread of its own: one left waiting on a collector must not hold the exit.
        threading.Thread(target=shut_down, name="fuseforks-traces-shutdown", daemon=True).start()
        if not await anyio.to_thread.run_sync(done.wait, SHUTDOWN_WAIT):
            _log.warning("traces: the collector did not take the last spans within %g s; they "
                         "are dropped", SHUTDOWN_WAIT)

    def _shutdown(self) -> None:
        shutdown = getattr(self.provider, "shutdown", None)
        if shutdown is not None:
            shutdown()


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
        from fuseforks.traces.otel import provider_from_env
    except ImportError as error:
        _log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry packages are not "
                     "installed (%s): no traces; install fuseforks[otel]", error)
        return None
    try:
        provider = provider_from_env()
    except FuseforksError as error:
        _log.warning("no traces: %s", error)
        return None
    return SpanSubscriber(provider, owned=True)
