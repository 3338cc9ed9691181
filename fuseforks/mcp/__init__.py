"""MCP tool layer: servers from an `mcpServers` file (stdio, streamable HTTP, HTTP+SSE; remote ones
logged in to with OAuth), their tools, and their outputs with images."""

from fuseforks.mcp.config import (
    ConfigError,
    HttpServer,
    ServerConfig,
    StdioServer,
    load_config,
    parse_config,
)
from fuseforks.mcp.connection import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_START_TIMEOUT,
)
from fuseforks.mcp.hub import OnProgress, OnWaiting, ToolDefinition, ToolHub

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_START_TIMEOUT",
    "ConfigError",
    "HttpServer",
    "OnProgress",
    "OnWaiting",
    "ServerConfig",
    "StdioServer",
    "ToolDefinition",
    "ToolHub",
    "load_config",
    "parse_config",
]
