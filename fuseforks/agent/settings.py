"""How an agent runs its turns: every default a caller can change, in one place.

`Agent(wire=..., model=...)` runs with `AgentSettings()`; a program changes only what it needs,
`Agent(..., settings=AgentSettings(language="ja", max_rounds=4))`, and a worker hands one object
to every agent it opens instead of forwarding a dozen keywords (as httpx's `Timeout` and
temporalio's configs do). The command line takes its option defaults from here too.

The limits a turn decides by are recorded on it (`TurnStarted`): changing a default here changes
what new turns do, never what a recorded one meant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from fuseforks.core.errors import ConfigError
from fuseforks.core.names import DEFAULT_IMAGE_CAP, DEFAULT_MAX_ROUNDS, Language, parse_language
from fuseforks.mcp.hub import DEFAULT_START_TIMEOUT
from fuseforks.projections.capabilities import DEFAULT_REPROBE_AFTER
from fuseforks.projections.conversation import HistoryBudget
from fuseforks.wires.http import RetryPolicy


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentSettings:
    name: str = "agent"
    """The agent's name in the record and the log."""
    language: Language = "en"
    """The village language of every sentence fuseforks adds for the model (ja, en, zh)."""
    system: str = ""
    """The system prompt."""
    max_rounds: int = DEFAULT_MAX_ROUNDS
    """Tool rounds before the closing summary call (at least 1)."""
    image_cap: int = DEFAULT_IMAGE_CAP
    """Tool images one request may carry, the newest kept."""
    history: HistoryBudget = field(default_factory=HistoryBudget)
    """How much of a conversation's earlier exchanges a turn sends."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """How the provider client retries a failed request."""
    mcp_start_timeout: float = DEFAULT_START_TIMEOUT
    """Seconds an MCP server may take to start (a server's own `startTimeout` wins)."""
    allow_missing_servers: bool = False
    """Send turns without the tools of a configured MCP server that did not start. By default
    such a turn is not sent: it is recorded as not started, naming the servers and why, and its
    result says so — a model asked to use a tool it is not offered answers something else."""
    reprobe_after: timedelta = DEFAULT_REPROBE_AFTER
    """How long a refused native placement is remembered before it is tried again."""
    worker: str = ""
    """The process running the agent's turns, named on each turn's start and on each turn it
    takes over (a worker sets its name); empty for a program of its own."""

    def __post_init__(self) -> None:
        parse_language(self.language)  # `UnknownName` for a language fuseforks does not speak
        if self.max_rounds < 1:
            raise ConfigError(f"max_rounds must be at least 1, got {self.max_rounds}")
        if self.image_cap < 0:
            raise ConfigError(f"image_cap must not be negative, got {self.image_cap}")
        if self.mcp_start_timeout <= 0:
            raise ConfigError(f"mcp_start_timeout must be positive, got {self.mcp_start_timeout}")
