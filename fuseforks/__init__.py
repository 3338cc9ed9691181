"""fuseforks: an event-sourced turn engine for LLM agents that call MCP tools.

Names are imported on first use, so that the command line (which imports this package first)
starts fast and only pays for what a command needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuseforks.images.normalize import normalize_image

__version__ = "0.1.0"

_EXPORTS = {"normalize_image": "fuseforks.images.normalize"}

__all__ = ["__version__", "normalize_image"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fuseforks' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
