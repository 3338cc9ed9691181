"""Bar charts drawn on the server: the geometry of an inline SVG, which a template writes out.

People would rather look than read, and the console fetches nothing from elsewhere and runs no
script of anyone else's (its content security policy forbids both): so a chart is plain SVG in
the page, its shapes computed here and its colours in the console's stylesheet (classes, never a
`style` attribute, which the policy refuses). Every bar carries a `<title>` naming its bucket, its
series and its value; the numbers are in a table beside it too.

A chart's bars stand on a time axis, one slot per bucket: stacked (the parts of one whole, such as
what became of a client's images) or side by side (two measures to compare, such as bytes in and
bytes out). The value axis runs from 0 to a round number (1, 2 or 5 times a power of ten).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

WIDTH = 720
HEIGHT = 240
LEFT = 64
"""Room for the value axis' labels."""
RIGHT = 12
TOP = 12
BOTTOM = 40
"""Room for the time axis' labels."""
BAR_SHARE = 0.8
"""Of a bucket's slot, what its bars fill (the rest keeps the buckets apart)."""
TIME_LABELS = 5
"""Buckets named on the time axis at most: the first, the last and some between."""
SLOT_MAX = 48
"""A bucket's slot at most, so that a few buckets are not a few slabs."""
BYTES = (1, 1024, 1024 * 1024)
"""The units a chart of bytes rounds its axis in, as `format_size` writes them."""


class Series(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    """Its class in the stylesheet (`series-NAME`)."""
    label: str
    values: list[int]
    """One per bucket."""


class Bar(msgspec.Struct, frozen=True, kw_only=True):
    x: float
    y: float
    width: float
    height: float
    series: str
    bucket: str
    value: int
    title: str


class Tick(msgspec.Struct, frozen=True, kw_only=True):
    at: float
    label: str
    anchor: str = "middle"


class Key(msgspec.Struct, frozen=True, kw_only=True):
    series: str
    label: str


class BarChart(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    title: str
    description: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    bars: list[Bar]
    values: list[Tick]
    """The value axis: where each round value is (y) and its label."""
    times: list[Tick]
    """The time axis: where each named bucket is (x) and its label."""
    keys: list[Key]


def round_up(value: int, units: Sequence[int] = (1,)) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … times the largest of `units` not over `value`
    (the first, for a smaller value) at or above `value`."""
    unit = _unit(value, units)
    count = -(-value // unit)
    top = 1
    while True:
        for factor in (1, 2, 5):
            if top * factor >= count:
                return top * factor * unit
        top *= 10


def _unit(value: int, units: Sequence[int]) -> int:
    return max((u for u in units if u <= value), default=units[0])


def bar_chart(*, id: str, title: str, description: str, buckets: Sequence[str],
              series: Sequence[Series], stacked: bool,
              shown: Callable[[int], str] = str, units: Sequence[int] = (1,)) -> BarChart:
    """A chart of `series` over `buckets` (their labels, oldest first); `shown` writes a value
    as the axis and the titles say it, `units` are what the axis' top is a round number of."""
    assert all(len(s.values) == len(buckets) for s in series)
    bottom, top = HEIGHT - BOTTOM, TOP
    height = bottom - top
    heights = ([sum(column) for column in zip(*(s.values for s in series), strict=True)]
               if stacked else [v for s in series for v in s.values])
    peak = max(heights, default=0)
    scale = round_up(peak, units)
    slot = min((WIDTH - RIGHT - LEFT) / max(len(buckets), 1), SLOT_MAX)
    width = slot * BAR_SHARE / (1 if stacked else max(len(series), 1))
    bars: list[Bar] = []
    for index, bucket in enumerate(buckets):
        x = LEFT + slot * index + slot * (1 - BAR_SHARE) / 2
        base = float(bottom)
        for place, one in enumerate(series):
            value = one.values[index]
            if not value:
                continue
            tall = height * value / scale
            left = x if stacked else x + width * place
            bars.append(Bar(x=round(left, 2), y=round(base - tall, 2), width=round(width, 2),
                            height=round(tall, 2), series=one.name, bucket=bucket, value=value,
                            title=f"{bucket}: {shown(value)} {one.label}"))
            if stacked:
                base -= tall
    middle = [scale // 2] if scale // _unit(peak, units) % 2 == 0 else []  # a round half
    values = [Tick(at=bottom - height * v / scale, label=shown(v), anchor="end")
              for v in (0, *middle, scale)]
    return BarChart(id=id, title=title, description=description, bars=bars, values=values,
                    times=_times(buckets, slot), keys=[Key(series=s.name, label=s.label)
                                                       for s in series])


def _times(buckets: Sequence[str], slot: float) -> list[Tick]:
    if not buckets:
        return []
    last = len(buckets) - 1
    step = max(1, -(-last // (TIME_LABELS - 1))) if last else 1
    named = sorted({*range(0, last, step), last})
    if len(named) > 1 and named[-1] - named[-2] < step / 2:
        named.pop(-2)  # the last one is always named; the one before it would crowd it
    return [Tick(at=round(LEFT + slot * (i + 0.5), 2), label=buckets[i],
                 anchor="start" if i == 0 and last else "end" if i == last and last else "middle")
            for i in named]
