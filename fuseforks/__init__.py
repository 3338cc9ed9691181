"""fuseforks: an event-sourced turn engine for LLM agents that call MCP tools.

Names are imported on first use, so that the command line (which imports this package first)
starts fast and only pays for what a command needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuseforks.agent import (
        Agent,
        Conversation,
        ConversationTurn,
        HistoryBudget,
        SentImage,
        TextDelta,
        TurnResult,
        TurnStream,
    )
    from fuseforks.core.errors import FuseforksError, RecordingFailed
    from fuseforks.images.normalize import normalize_image

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "fuseforks.agent",
    "Conversation": "fuseforks.agent",
    "ConversationTurn": "fuseforks.agent",
    "HistoryBudget": "fuseforks.agent",
    "SentImage": "fuseforks.agent",
    "TextDelta": "fuseforks.agent",
    "TurnResult": "fuseforks.agent",
    "TurnStream": "fuseforks.agent",
    "FuseforksError": "fuseforks.core.errors",
    "RecordingFailed": "fuseforks.core.errors",
    "normalize_image": "fuseforks.images.normalize",
}

__all__ = [
    "Agent",
    "Conversation",
    "ConversationTurn",
    "FuseforksError",
    "HistoryBudget",
    "RecordingFailed",
    "SentImage",
    "TextDelta",
    "TurnResult",
    "TurnStream",
    "__version__",
    "normalize_image",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fuseforks' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
