"""The capability fold and the start-placement rule, without a provider."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fuseforks.events.codec import Envelope
from fuseforks.events.types import PlacementLearned
from fuseforks.projections.capabilities import Capability, capabilities, start_placement

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def learned(at: str, placement: str, outcome: str, model: str = "g") -> Envelope:
    return Envelope(turn_id=f"t-{at}", seq=1, at=at, event=PlacementLearned(
        round=1, wire="gemini", model=model, endpoint_host="h", placement=placement,
        outcome=outcome))  # type: ignore[arg-type]


def start(rows: list[Capability], own: str = "native") -> str:
    return start_placement(rows, wire="gemini", model="g", endpoint_host="h",
                           own=own, now=NOW)  # type: ignore[arg-type]


def test_the_fold_keeps_the_latest_time_of_each_outcome_and_folds_on_from_known_rows() -> None:
    first = capabilities([learned("2026-11-29T10:00:00.000Z", "native", "refused"),
                          learned("2026-11-29T09:00:00.000Z", "native", "refused")])
    assert first == [Capability(wire="gemini", model="g", endpoint_host="h", placement="native",
                                last_refused="2026-11-29T10:00:00.000Z")]
    more = capabilities([learned("2026-11-29T11:00:00.000Z", "alternate", "received")], first)
    assert [(r.placement, r.last_received, r.last_refused) for r in more] == [
        ("native", None, "2026-11-29T10:00:00.000Z"),
        ("alternate", "2026-11-29T11:00:00.000Z", None)]


def test_a_recent_native_refusal_starts_alternate_and_an_old_one_probes_native() -> None:
    recent = capabilities([learned("2026-11-29T12:00:00.000Z", "native", "refused")])
    assert start(recent) == "alternate"
    old = capabilities([learned((NOW - timedelta(days=8)).isoformat().replace("+00:00", "Z"),
                                "native", "refused")])
    assert start(old) == "native"


def test_native_received_after_its_refusal_starts_native_and_other_models_do_not_count() -> None:
    rows = capabilities([learned("2026-11-29T10:00:00.000Z", "native", "refused"),
                         learned("2026-11-29T11:00:00.000Z", "native", "received")])
    assert start(rows) == "native"
    other = capabilities([learned("2026-11-29T12:00:00.000Z", "native", "refused", "x")])
    assert start(other) == "native"
    assert start(capabilities([learned("2026-11-29T12:00:00.000Z", "native", "refused")]),
                 own="alternate") == "alternate"
