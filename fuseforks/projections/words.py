"""One vocabulary for every reader: what a turn's stop, a model call's end and a turn's images
are called — in the log, `turns`, the audit, the console, the demo's table and the traces.

- A turn stops `answered`, `tool_limit`, `repeat`, `error` or `interrupted`, and is `cut` while
  its record has no end; a gateway session ends `closed` or by a signal. Every reader writes
  these names as they are.
- A model call that the HTTP edge gave up on ends one of three ways (`call_end`): `refused` — the
  provider refused it (a 4xx) and nothing was retried, for a refusal is answered, not retried;
  `failed` — it failed at its first attempt for another reason (a broken answer); `gave_up` — it
  was retried, and the retries ran out. A retry is only ever a call sent again.
- A delivery of a tool image is `received`, `refused` or `unanswered`, and `stripped` when the
  fallback then took the image off (`fuseforks.projections.deliveries`).
- A turn's images (`images_shown`): how many its requests sent, and, when not all of them reached
  the model, what became of them — the same words in every list.
"""

from __future__ import annotations

from typing import Literal

from fuseforks.events.types import LlmRetryStopped
from fuseforks.projections.summary import TurnSummary

CallEnd = Literal["refused", "failed", "gave_up"]


def call_end(event: LlmRetryStopped) -> CallEnd:
    """How a model call the HTTP edge gave up on ended."""
    if event.attempt > 1:
        return "gave_up"
    if event.status is not None and 400 <= event.status < 500:
        return "refused"
    return "failed"


def images_shown(summary: TurnSummary) -> str:
    """A turn's images as a list shows them: `2`, or `1 (refused 2×, 1 stripped)`, or
    `3 (2 received)` when some never reached the model otherwise."""
    notes = []
    if summary.refusals:
        notes.append(f"refused {summary.refusals}×")
    if summary.stripped:
        notes.append(f"{summary.stripped} stripped")
    if not notes and summary.images_received < summary.images_sent:
        notes.append(f"{summary.images_received} received")
    return f"{summary.images_sent} ({', '.join(notes)})" if notes else str(summary.images_sent)
