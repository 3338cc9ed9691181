"""The console's bar charts: geometry computed on the server, for an inline SVG."""

from __future__ import annotations

import pytest

from fuseforks.console.chart import BYTES, HEIGHT, Series, bar_chart, round_up
from fuseforks.core.texts import format_size

BOTTOM = HEIGHT - 40


def test_the_value_axis_ends_at_a_round_number() -> None:
    assert [round_up(v) for v in (0, 1, 2, 3, 6, 10, 11, 99, 501)] == [
        1, 1, 2, 5, 10, 10, 20, 100, 1000]
    assert [round_up(v, BYTES) for v in (900, 1025, 13_102_082)] == [
        1000, 2 * 1024, 20 * 1024 * 1024]


def test_stacked_bars_stand_on_each_other_and_a_zero_draws_nothing() -> None:
    chart = bar_chart(id="c", title="t", description="d", buckets=["a", "b"], stacked=True,
                      series=[Series(name="passed", label="passed through", values=[1, 0]),
                              Series(name="dropped", label="dropped", values=[3, 2])])
    assert [(b.series, b.bucket, b.value, b.title) for b in chart.bars] == [
        ("passed", "a", 1, "a: 1 passed through"), ("dropped", "a", 3, "a: 3 dropped"),
        ("dropped", "b", 2, "b: 2 dropped")]
    first, second, third = chart.bars
    assert (first.y + first.height, second.y + second.height, third.y + third.height) == (
        BOTTOM, first.y, BOTTOM)
    assert second.height == pytest.approx(3 * first.height) and first.x == second.x < third.x
    assert [(t.label, t.at) for t in chart.values] == [("0", BOTTOM), ("5", 12)]


def test_grouped_bars_stand_side_by_side_on_a_byte_axis() -> None:
    chart = bar_chart(id="c", title="t", description="d", buckets=["a"], stacked=False,
                      series=[Series(name="received_bytes", label="from servers",
                                     values=[3 * 1024 * 1024]),
                              Series(name="sent_bytes", label="sent", values=[1024 * 1024])],
                      shown=format_size, units=BYTES)
    received, sent = chart.bars
    assert received.x + received.width == sent.x
    assert received.y + received.height == sent.y + sent.height == BOTTOM
    assert received.title == "a: 3.0 MB from servers"
    assert [t.label for t in chart.values] == ["0 KB", "5.0 MB"]
