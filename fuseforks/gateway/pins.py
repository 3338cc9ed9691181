"""Tool definitions held to what the gateway last offered its clients.

A server can change a tool's description or input schema after a user has come to trust it —
the "rug pull" MCP security reviews warn about: the name stays, what the model is told to do
with it changes. The record already holds every definition the gateway offered
(`SessionStarted.tools`), so at start the gateway compares each tool with the last definition
it offered under that name: a change is named on stderr and in the session's start, and with
`--pin` the tool is kept from clients until approved (`--approve NAME`), which makes the new
definition the one offered and so, from then on, the one compared against. A tool never offered
before is new, not changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from fuseforks.events.types import SessionStarted, ToolSpecRecord


class ToolChange(msgspec.Struct, frozen=True, kw_only=True):
    """A tool offered before whose definition is not the one offered last."""

    name: str
    changed: list[str]
    """What changed: `description`, `input schema`."""


def last_offered(started: Iterable[SessionStarted], agent: str) -> dict[str, ToolSpecRecord]:
    """The definition of each tool as the gateway `agent` last offered it (sessions in record
    order)."""
    offered: dict[str, ToolSpecRecord] = {}
    for session in started:
        if session.agent == agent:
            offered.update((tool.name, tool) for tool in session.tools)
    return offered


def changes(offered: Mapping[str, ToolSpecRecord],
            current: Sequence[ToolSpecRecord]) -> list[ToolChange]:
    """The tools of `current` whose definition differs from the one last offered."""
    found: list[ToolChange] = []
    for tool in current:
        before = offered.get(tool.name)
        if before is None:
            continue
        what = [part for part, differs in (
            ("description", before.description != tool.description),
            ("input schema", before.input_schema != tool.input_schema)) if differs]
        if what:
            found.append(ToolChange(name=tool.name, changed=what))
    return found


def change_lines(found: Sequence[ToolChange], withheld: Iterable[str], pin: bool) -> list[str]:
    """One stderr line for each changed tool, saying what becomes of it."""
    kept_back = set(withheld)
    lines = []
    for change in found:
        line = (f"tool {change.name!r} changed since it was last offered "
                f"({', '.join(change.changed)})")
        if change.name in kept_back:
            line += f"; withheld until approved (--approve {change.name})"
        elif pin:
            line += "; approved"
        lines.append(line)
    return lines
