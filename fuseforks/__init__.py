"""fuseforks: an event-sourced turn engine for LLM agents that call MCP tools."""

from fuseforks.images.normalize import normalize_image

__version__ = "0.1.0"

__all__ = ["__version__", "normalize_image"]
