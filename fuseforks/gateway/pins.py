"""Tool definitions held to what the gateway last offered its clients.

A server can change a tool's description or input schema after a user has come to trust it —
the "rug pull" MCP security reviews warn about: the name stays, what the model is told to do
with it changes. The record already holds every definition the gateway offered
(`SessionStarted.tools`, and `ToolsChanged.tools` when a server's list changed while it ran), so
the gateway compares each tool with the last definition it offered under that name — at start,
and again each time a server announces a new list (`Pins.check`, one comparison for both): a
change is named on stderr and in the record, and with `--pin` the tool is kept from clients until
approved (`--approve NAME`), which makes the new definition the one offered and so, from then on,
the one compared against. An approval is of the definition the gateway starts with: a tool that
changes again while it runs is kept back again. A tool never offered before is new, not changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from fuseforks.events.codec import Envelope
from fuseforks.events.types import SessionStarted, ToolsChanged, ToolSpecRecord

OFFERING_KINDS = ("SessionStarted", "ToolsChanged")
"""The kinds of event that say which tools a gateway offered (`last_offered` reads them)."""


class ToolChange(msgspec.Struct, frozen=True, kw_only=True):
    """A tool offered before whose definition is not the one offered last."""

    name: str
    changed: list[str]
    """What changed: `description`, `input schema`."""


def last_offered(record: Iterable[Envelope], agent: str) -> dict[str, ToolSpecRecord]:
    """The definition of each tool as the gateway `agent` last offered it, from the events of
    `OFFERING_KINDS` in record order (a `ToolsChanged` is its session's, whose start names the
    gateway)."""
    offered: dict[str, ToolSpecRecord] = {}
    ours: set[str] = set()
    for envelope in record:
        event = envelope.event
        if isinstance(event, SessionStarted) and event.agent == agent:
            ours.add(envelope.turn_id)
        if isinstance(event, SessionStarted | ToolsChanged) and envelope.turn_id in ours:
            offered.update((tool.name, tool) for tool in event.tools)
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


class Pins:
    """The definitions a running gateway holds its tools to, and the tools it keeps back."""

    def __init__(self, offered: Mapping[str, ToolSpecRecord], *, pin: bool,
                 approve: Iterable[str] = ()) -> None:
        """`offered`: each tool's definition last offered (`last_offered`); `pin`: a changed
        tool is withheld unless it is in `approve`."""
        self._offered = dict(offered)
        self._pin = pin
        self._approve = frozenset(approve)
        self._seen: dict[str, ToolSpecRecord] = {}
        self.withheld: list[str] = []
        """The tools kept from clients now."""
        self.changed: list[str] = []
        """Every tool found changed since the gateway started, in the order found."""

    def check(self, current: Sequence[ToolSpecRecord]) -> list[ToolChange]:
        """The tools of `current` — every tool the servers offer now, withheld or not — whose
        definition is not the one last offered, and that changed since the last check (a tool
        kept back is named once for each new definition). Decides `withheld` anew; what is
        offered becomes the definition compared against."""
        found = changes(self._offered, current)
        self.withheld = [c.name for c in found if self._pin and c.name not in self._approve]
        kept = set(self.withheld)
        self._offered.update((tool.name, tool) for tool in current if tool.name not in kept)
        now = {tool.name: tool for tool in current}
        news = [c for c in found if self._seen.get(c.name) != now[c.name]]
        self._seen, self._approve = now, frozenset()
        self.changed += [c.name for c in news if c.name not in self.changed]
        return news


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
