"""The library's front door: an `Agent` that owns its provider, tools, store, bus and log."""

from fuseforks.agent.agent import Agent, Conversation, McpServers
from fuseforks.agent.result import SentImage, TurnResult
from fuseforks.agent.settings import AgentSettings
from fuseforks.agent.stream import TurnStream
from fuseforks.ports.model import TextDelta
from fuseforks.projections.conversation import ConversationTurn, HistoryBudget

__all__ = [
    "Agent",
    "AgentSettings",
    "Conversation",
    "ConversationTurn",
    "HistoryBudget",
    "McpServers",
    "SentImage",
    "TextDelta",
    "TurnResult",
    "TurnStream",
]
