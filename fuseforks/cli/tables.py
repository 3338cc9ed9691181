"""Aligned text tables for the listing commands: text to the left, counts to the right."""

from __future__ import annotations

from collections.abc import Sequence


def aligned(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """One line per row under the header; a column of whole numbers is right-aligned; `None`
    shows as `-`; no trailing spaces."""
    cells = [list(header)] + [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    numeric = [bool(rows) and all(isinstance(row[i], int) for row in rows)
               for i in range(len(header))]
    return [
        "  ".join(cell.rjust(width) if right else cell.ljust(width)
                  for cell, width, right in zip(line, widths, numeric, strict=True)).rstrip()
        for line in cells
    ]


def of_fields(columns: Sequence[tuple[str, str]], rows: Sequence[object]) -> list[str]:
    """`aligned`, from objects: `columns` pairs each title with the attribute shown under it."""
    return aligned([title for title, _ in columns],
                   [[getattr(row, field) for _, field in columns] for row in rows])
