"""Traces: a turn's events as OpenTelemetry GenAI spans (`invoke_agent` → `chat`,
`execute_tool`), live through a bus subscriber and for recorded turns alike.

`spans.py` is the pure projection, a fold like every other (what each event says is in
`attributes.py`, opt-in content in `content.py`), and imports no OpenTelemetry; `otel.py` hands
spans to the SDK and encodes them (the `fuseforks[otel]` extra) and is imported only when spans
are sent.
"""

from fuseforks.traces.live import SpanSubscriber, TracerProviderLike, live_subscriber
from fuseforks.traces.spans import TraceEvent, TraceSpan, capture_content, turn_spans

__all__ = [
    "SpanSubscriber",
    "TraceEvent",
    "TraceSpan",
    "TracerProviderLike",
    "capture_content",
    "live_subscriber",
    "turn_spans",
]
