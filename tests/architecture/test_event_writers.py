"""Every event is written by the engine: no product module outside `fuseforks/engine/` and
`fuseforks/events/` (the vocabulary, its codec and sealing) builds an event. Decoding a stored
event is reading, through the codec, and not building one."""

from __future__ import annotations

import ast
from pathlib import Path

from fuseforks.events.types import EVENT_TYPES

PACKAGE = Path(__file__).resolve().parents[2] / "fuseforks"
WRITERS = ("engine", "events")
KINDS = {kind.__name__ for kind in EVENT_TYPES}


def event_constructors(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, kind) of each call that names an event kind: `TurnEnded(...)`, `types.TurnEnded(...)`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = (node.func.id if isinstance(node.func, ast.Name)
                    else node.func.attr if isinstance(node.func, ast.Attribute) else None)
            if name in KINDS:
                found.append((node.lineno, name))
    return found


def test_the_scan_finds_an_event_built_by_hand() -> None:
    source = "from fuseforks.events import types\nx = types.TurnEnded(rounds=0, stop='error')\n" \
             "y = TurnStarted(**z)\n"
    assert event_constructors(ast.parse(source)) == [(2, "TurnEnded"), (3, "TurnStarted")]


def test_no_event_is_built_outside_the_engine_and_the_vocabulary() -> None:
    built = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in WRITERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        built += [f"fuseforks/{relative}:{line}: {kind}(...)"
                  for line, kind in event_constructors(tree)]
    assert built == [], "events built outside the engine:\n" + "\n".join(built)
