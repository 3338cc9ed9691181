"""How a worker runs: its own limits, and the settings of every agent it opens, in one object.

The agent's name, village language and system prompt come from each request; everything else an
agent runs by (`AgentSettings`: rounds, image cap, retries, ...) is the worker's, handed whole to
each agent it opens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuseforks.agent import AgentSettings
from fuseforks.core.errors import ConfigError


@dataclass(frozen=True, kw_only=True, slots=True)
class WorkerSettings:
    concurrency: int = 4
    """Turns run at once."""
    grace: float = 30.0
    """Seconds running turns get to finish on shutdown before they are handed back."""
    max_agents: int = 32
    """Agents (one per wire, model, agent name, language and system prompt) kept open; the least
    recently used idle ones are closed beyond this."""
    agents: AgentSettings = field(default_factory=AgentSettings)
    """What every agent runs by; a request's agent name, language and system prompt replace
    those three."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_agents < 1:
            raise ConfigError(f"max_agents must be at least 1, got {self.max_agents}")
