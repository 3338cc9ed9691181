"""MCP tool layer: servers from an `mcpServers` file, their tools, and their outputs with images."""

from fuseforks.mcp.config import (
    ConfigError,
    HttpServer,
    ServerConfig,
    StdioServer,
    load_config,
    parse_config,
)
from fuseforks.mcp.connection import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT
from fuseforks.mcp.hub import ToolDefinition, ToolHub

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "ConfigError",
    "HttpServer",
    "ServerConfig",
    "StdioServer",
    "ToolDefinition",
    "ToolHub",
    "load_config",
    "parse_config",
]
