"""The names the gateway's client sees for tools and prompts.

`prefixed` (the default): the engine's names, `<server>__<tool>`, so two servers may offer a tool
of the same name and the record names the server. `plain`: a server's own name, where no other
server offers the same one (a name two servers share keeps its prefix on both).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal, get_args

ToolNaming = Literal["prefixed", "plain"]
TOOL_NAMINGS: tuple[ToolNaming, ...] = get_args(ToolNaming)


class Names:
    """Exposed name <-> the hub's prefixed name, for one listing."""

    def __init__(self, listed: Iterable[tuple[str, str]], naming: ToolNaming) -> None:
        """`listed`: (prefixed name, the server's own name) of every tool or prompt."""
        pairs = list(listed)
        shared = Counter(own for _, own in pairs)
        self._exposed: dict[str, str] = {}
        for prefixed, own in pairs:
            exposed = own if naming == "plain" and shared[own] == 1 else prefixed
            self._exposed[prefixed] = exposed
        self._prefixed = {exposed: prefixed for prefixed, exposed in self._exposed.items()}

    def exposed(self, prefixed: str) -> str:
        return self._exposed.get(prefixed, prefixed)

    def prefixed(self, exposed: str) -> str:
        """The hub's name for what the client called `exposed` (unknown names pass unchanged,
        and the hub answers that it does not know them)."""
        return self._prefixed.get(exposed, exposed)
