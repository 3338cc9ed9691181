"""fuseforks: an event-sourced turn engine for LLM agents that call MCP tools.

Names are imported on first use, so that the command line (which imports this package first)
starts fast and only pays for what a command needs. Every exception fuseforks raises for a caller
derives from `FuseforksError` and is exported here (the tree: `fuseforks.core.errors`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuseforks.agent import (
        Agent,
        AgentSettings,
        Conversation,
        ConversationTurn,
        HistoryBudget,
        SentImage,
        TextDelta,
        TurnResult,
        TurnStream,
    )
    from fuseforks.core.errors import (
        BusError,
        ClusterError,
        ConcurrencyError,
        ConfigError,
        CorruptStoreError,
        FuseforksError,
        HandedBack,
        LeaseLost,
        McpUnavailable,
        MissingKey,
        NewerSchemaError,
        NothingToTakeOver,
        PixelLeakError,
        PrefixDiverged,
        RecordingFailed,
        SessionClosed,
        StoreError,
        StreamFormatError,
        UnknownName,
        WireError,
        WireGarbage,
        WireRejected,
        WireRetryable,
        WireUnavailable,
    )
    from fuseforks.images.normalize import normalize_image

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "fuseforks.agent",
    "AgentSettings": "fuseforks.agent",
    "Conversation": "fuseforks.agent",
    "ConversationTurn": "fuseforks.agent",
    "HistoryBudget": "fuseforks.agent",
    "SentImage": "fuseforks.agent",
    "TextDelta": "fuseforks.agent",
    "TurnResult": "fuseforks.agent",
    "TurnStream": "fuseforks.agent",
    "BusError": "fuseforks.core.errors",
    "ClusterError": "fuseforks.core.errors",
    "ConcurrencyError": "fuseforks.core.errors",
    "ConfigError": "fuseforks.core.errors",
    "CorruptStoreError": "fuseforks.core.errors",
    "FuseforksError": "fuseforks.core.errors",
    "HandedBack": "fuseforks.core.errors",
    "LeaseLost": "fuseforks.core.errors",
    "McpUnavailable": "fuseforks.core.errors",
    "MissingKey": "fuseforks.core.errors",
    "NewerSchemaError": "fuseforks.core.errors",
    "NothingToTakeOver": "fuseforks.core.errors",
    "PixelLeakError": "fuseforks.core.errors",
    "PrefixDiverged": "fuseforks.core.errors",
    "RecordingFailed": "fuseforks.core.errors",
    "SessionClosed": "fuseforks.core.errors",
    "StoreError": "fuseforks.core.errors",
    "StreamFormatError": "fuseforks.core.errors",
    "UnknownName": "fuseforks.core.errors",
    "WireError": "fuseforks.core.errors",
    "WireGarbage": "fuseforks.core.errors",
    "WireRejected": "fuseforks.core.errors",
    "WireRetryable": "fuseforks.core.errors",
    "WireUnavailable": "fuseforks.core.errors",
    "normalize_image": "fuseforks.images.normalize",
}

__all__ = [
    "Agent",
    "AgentSettings",
    "BusError",
    "ClusterError",
    "ConcurrencyError",
    "ConfigError",
    "Conversation",
    "ConversationTurn",
    "CorruptStoreError",
    "FuseforksError",
    "HandedBack",
    "HistoryBudget",
    "LeaseLost",
    "McpUnavailable",
    "MissingKey",
    "NewerSchemaError",
    "NothingToTakeOver",
    "PixelLeakError",
    "PrefixDiverged",
    "RecordingFailed",
    "SentImage",
    "SessionClosed",
    "StoreError",
    "StreamFormatError",
    "TextDelta",
    "TurnResult",
    "TurnStream",
    "UnknownName",
    "WireError",
    "WireGarbage",
    "WireRejected",
    "WireRetryable",
    "WireUnavailable",
    "__version__",
    "normalize_image",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fuseforks' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
