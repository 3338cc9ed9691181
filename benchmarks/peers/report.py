"""The benchmark's tables, in Markdown (as the README carries them), and the goals' verdicts.

A ratio `a · b` is min against min and median against median. Against the floor: the floor's row;
against fuseforks: the fuseforks row on the same wire (for fuseforks on PostgreSQL, fuseforks on
SQLite). A row that failed shows its error where its figures would be.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from benchmarks.peers.contenders import FUSEFORKS_OF_WIRE
from benchmarks.peers.measure import Summary
from benchmarks.peers.phases import Figures, Row

MiB = 1024 * 1024
GOALS = {"wall": 1.25, "cpu": 1.5, "rate": 1.0, "growth": 1024.0, "ttft": 1.1}
"""fuseforks' goals: wall and CPU per warm turn at most these times the floor's, throughput at
least the floor's, memory growth at most this many bytes per turn, first token at most this many
times the SDK's."""


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(line[n]) for line in [header, *rows]) for n in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("| " + " | ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
                     + " |" for line in lines)


def summary(figures: Figures | None, name: str) -> Summary | None:
    if figures is None or figures.error or not figures.values.get(name):
        return None
    return Summary.of(figures.values[name])


def pair(s: Summary | None, unit: float = 1.0, digits: int = 2) -> str:
    return "-" if s is None else f"{s.low * unit:.{digits}f} · {s.median * unit:.{digits}f}"


def ratio(ours: Summary | None, theirs: Summary | None) -> str:
    if ours is None or theirs is None or ours is theirs:
        return "-"
    return f"{ours.low / theirs.low:.2f} · {ours.median / theirs.median:.2f}"


def reference(row: Row, rows: list[Row]) -> tuple[str, str]:
    """The keys of the floor's row and of the fuseforks row this row is compared with."""
    fuseforks = FUSEFORKS_OF_WIRE[row.contender.wire]
    if row.contender.kind == "floor":
        fuseforks = row.key
    return next((r.key for r in rows if r.contender.kind == "floor"), ""), fuseforks


def compared(rows: list[Row], figures: dict[str, Figures], name: str, head: str, *,
             unit: float, digits: int, extra_head: Sequence[str] = (),
             extra: Callable[[Row, Figures], list[str]] = lambda row, mine: []) -> str:
    lines = []
    for row in rows:
        mine = figures.get(row.key)
        cells = [row.label, row.contender.wire]
        if mine is None:
            continue
        if mine.error:
            lines.append([*cells, f"failed: {mine.error}", "", "", *["" for _ in extra(row, mine)]])
            continue
        floor, fuseforks = reference(row, rows)
        ours = summary(mine, name)
        lines.append([*cells, pair(ours, unit, digits),
                      ratio(ours, summary(figures.get(floor), name)),
                      ratio(ours, summary(figures.get(fuseforks), name)), *extra(row, mine)])
    return table(["contender", "wire", head, "× floor", "× fuseforks", *extra_head], lines)


def turns_table(rows: list[Row], figures: dict[str, Figures]) -> str:
    def rss_and_image(row: Row, mine: Figures) -> list[str]:
        return [f"{mine.totals.get('peak_rss', 0) / MiB:.0f}", mine.delivered()]

    wall = compared(rows, figures, "wall", "wall ms min · median", unit=1000, digits=1,
                    extra_head=["peak RSS MiB", "image"], extra=rss_and_image)
    cpu = compared(rows, figures, "cpu", "CPU ms min · median", unit=1000, digits=1)
    return wall + "\n\n" + cpu


def infrastructure_table(rows: list[Row], figures: dict[str, Figures]) -> str:
    lines = []
    for row in rows:
        mine = figures.get(row.key)
        if mine is None or mine.error or not mine.values.get("wall"):
            continue
        count = len(mine.values["wall"])
        database = mine.totals.get("database")
        lines.append([row.label, row.contender.wire,
                      f"{mine.totals['simulator'] / count * 1000:.2f}",
                      f"{mine.totals['camera'] / count * 1000:.2f}",
                      f"{database / count * 1000:.2f}" if database is not None else "-",
                      f"{summary(mine, 'cpu_inside').median * 1000:.2f}"  # type: ignore[union-attr]
                      ])
    return table(["contender", "wire", "simulator CPU ms", "camera CPU ms", "PostgreSQL CPU ms",
                  "own CPU inside the turn ms (median)"], lines)


def flight_table(rows: list[Row], figures: dict[str, Figures]) -> str:
    def rss_and_image(row: Row, mine: Figures) -> list[str]:
        return [f"{mine.totals.get('peak_rss', 0) / MiB:.0f}", mine.delivered()]

    lines = []
    for row in rows:
        mine = figures.get(row.key)
        if mine is None:
            continue
        if mine.error:
            lines.append([row.label, row.contender.wire, f"failed: {mine.error}", "", "", "", ""])
            continue
        floor, fuseforks = reference(row, rows)
        best = best_rate(mine)
        lines.append([row.label, row.contender.wire, pair(best, digits=1),
                      ratio(best, best_rate(figures.get(floor))),
                      ratio(best, best_rate(figures.get(fuseforks))), *rss_and_image(row, mine)])
    return table(["contender", "wire", "turns/s best · median", "× floor", "× fuseforks",
                  "peak RSS MiB", "image"], lines)


def best_rate(figures: Figures | None) -> Summary | None:
    """Throughput's summary: the best burst (the highest rate) and the median."""
    s = summary(figures, "rate")
    return None if s is None or figures is None else Summary(
        max(figures.values["rate"]), s.median, s.count)


def imports_table(rows: list[Row], figures: dict[str, Figures]) -> str:
    return compared(rows, figures, "imports", "import s min · median", unit=1, digits=3)


def memory_table(rows: list[Row], figures: dict[str, Figures]) -> str:
    lines = []
    for row in rows:
        mine = figures[row.key]
        if mine.error:
            lines.append([row.label, row.contender.wire, f"failed: {mine.error}", "", "", ""])
            continue
        rss, at = mine.values["rss"], mine.values["at"]
        lines.append([row.label, row.contender.wire, f"{mine.totals['growth'] / 1024:.2f}",
                      f"{rss[0] / MiB:.1f} → {rss[-1] / MiB:.1f}", f"{at[-1]:.0f}",
                      mine.delivered()])
    return table(["contender", "wire", "KiB/turn", "RSS MiB after warm-up → end", "turns",
                  "image"], lines)


def ttft_table(measured: list[dict[str, dict[str, float]]]) -> str:
    lines = []
    for wire in measured:
        agent, sdk = wire["agent"], wire["sdk"]
        lines.append([str(wire["wire"]), f"{agent['min'] * 1000:.2f} · {agent['median'] * 1000:.2f}",
                      f"{sdk['min'] * 1000:.2f} · {sdk['median'] * 1000:.2f}",
                      f"{agent['min'] / sdk['min']:.2f} · {agent['median'] / sdk['median']:.2f}",
                      f"{wire['agent_all']['median'] * 1000:.2f} · "
                      f"{wire['sdk_all']['median'] * 1000:.2f}"])
    return table(["wire", "agent.stream ms min · median", "SDK .stream ms min · median",
                  "× SDK", "whole answer ms, median: agent · SDK"], lines)


def verdict(name: str, value: float | None, goal: float, *, at_most: bool = True) -> str:
    if value is None:
        return f"{name}: not measured"
    met = value <= goal if at_most else value >= goal
    sign = "<=" if at_most else ">="
    return f"{name}: {value:.2f} (goal {sign} {goal:g}) {'met' if met else 'MISSED'}"


def goals(rows: list[Row], turns: dict[str, Figures], flight: dict[str, Figures],
          ttft: list[dict[str, dict[str, float]]]) -> list[str]:
    """fuseforks' goals, each row against the floor (medians)."""
    lines = []
    for row in rows:
        if row.contender.kind != "fuseforks":
            continue
        floor, _ = reference(row, rows)

        def against(figures: dict[str, Figures], name: str, key: str = row.key,
                    floor: str = floor) -> float | None:
            ours, theirs = summary(figures.get(key), name), summary(figures.get(floor), name)
            return None if ours is None or theirs is None else ours.median / theirs.median

        lines += [f"{row.label} ({row.contender.wire}):",
                  "  " + verdict("wall per warm turn × floor", against(turns, "wall"),
                                 GOALS["wall"]),
                  "  " + verdict("CPU per warm turn × floor", against(turns, "cpu"),
                                 GOALS["cpu"]),
                  "  " + verdict("throughput, 16 in flight × floor", against(flight, "rate"),
                                 GOALS["rate"], at_most=False)]
    for wire in ttft:
        lines.append(verdict(f"first token through agent.stream × SDK, {wire['wire']}",
                             wire["agent"]["median"] / wire["sdk"]["median"], GOALS["ttft"]))
    return lines


def memory_goals(rows: list[Row], figures: dict[str, Figures]) -> list[str]:
    return [verdict(f"RSS growth per turn, {row.label} ({row.contender.wire}), bytes",
                    None if figures[row.key].error else figures[row.key].totals["growth"],
                    GOALS["growth"])
            for row in rows if row.contender.kind == "fuseforks"]
