"""One-line reasons for everything that can go wrong between the engine and an MCP server.

Each reason is what the log line says and what follows the localized error prefix in the text the
model reads. They name the server and what happened, never tool output or image content; a server's
own stderr appears only as its last line, cut short.
"""

from __future__ import annotations

from typing import IO

_STDERR_TAIL_BYTES = 4096
_STDERR_LINE_CHARS = 200


def _seconds(value: float) -> str:
    return f"{value:g} s"


def stderr_tail(stream: IO[str] | None) -> str | None:
    """The last non-empty line a stdio server wrote to stderr, cut to 200 characters."""
    if stream is None:
        return None
    try:
        stream.flush()
        end = stream.seek(0, 2)
        stream.seek(max(0, end - _STDERR_TAIL_BYTES))
        tail = stream.read()
    except (OSError, ValueError):
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[-1]
    return line if len(line) <= _STDERR_LINE_CHARS else line[: _STDERR_LINE_CHARS - 1] + "…"


def _with_stderr(reason: str, stderr: str | None) -> str:
    return reason if stderr is None else f"{reason} (stderr: {stderr})"


def command_not_found(server: str, command: str) -> str:
    return f"server {server!r} could not be started: command not found: {command!r}"


def cannot_execute(server: str, command: str, error: OSError) -> str:
    detail = error.strerror or type(error).__name__
    return f"server {server!r} could not be started: {command!r}: {detail}"


def exited_at_start(server: str, stderr: str | None) -> str:
    return _with_stderr(f"server {server!r} exited before completing the MCP handshake", stderr)


def handshake_timeout(server: str, seconds: float, garbage_lines: int) -> str:
    if garbage_lines:
        return (
            f"server {server!r} wrote output to stdout that is not JSON-RPC and did not complete "
            f"the MCP handshake within {_seconds(seconds)}"
        )
    return f"server {server!r} did not complete the MCP handshake within {_seconds(seconds)}"


def unreachable(server: str, url: str, error: BaseException) -> str:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"server {server!r} could not be reached at {url}: {detail}"


def handshake_failed(server: str, error: BaseException) -> str:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"server {server!r} failed the MCP handshake: {detail}"


def closed_during_call(server: str, stderr: str | None, transport: str | None = None) -> str:
    """`transport` is the SDK's own account when it has more than "Connection closed"."""
    reason = f"server {server!r} closed the connection during the call"
    if transport:
        reason = f"{reason} ({transport.strip().splitlines()[0]})"
    return _with_stderr(reason, stderr)


def call_timeout(server: str, tool: str, seconds: float) -> str:
    return (
        f"server {server!r} did not answer {tool!r} within {_seconds(seconds)}; "
        "the call was cancelled"
    )


def rejected(server: str, tool: str, code: int, message: str) -> str:
    first_line = message.strip().splitlines()[0] if message.strip() else "(no message)"
    return f"server {server!r} rejected the call to {tool!r}: {first_line} (code {code})"


def malformed_result(server: str, tool: str) -> str:
    return f"server {server!r} answered {tool!r} with a result that is not a valid CallToolResult"


def call_failed(server: str, tool: str, error: BaseException) -> str:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"call to {tool!r} on server {server!r} failed: {detail}"


def unknown_tool(name: str) -> str:
    return f"unknown tool {name!r}"


def down_after_restart(server: str, reason: str) -> str:
    return f"server {server!r} is down (restart failed): {reason}"
