"""One-line reasons for everything that can go wrong between the engine and an MCP server.

Each reason is what the log line says and what follows the localized error prefix in the text the
model reads. They name the server and what happened, never tool output or image content; a server's
own stderr appears only as its last few lines, each cut short, and its secrets are taken out by
the connection before a reason is made.
"""

from __future__ import annotations

from typing import IO

_STDERR_TAIL_BYTES = 4096
_STDERR_LINES = 3
_STDERR_LINE_CHARS = 200
_STDOUT_LINE_CHARS = 80


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _cut(line: str, chars: int) -> str:
    return line if len(line) <= chars else line[: chars - 1] + "…"


def stderr_tail(stream: IO[str] | None) -> str | None:
    """The last three non-empty lines a stdio server wrote to stderr, each cut to 200
    characters, joined by ` | `: the lines that say why a process ended (an exception and its
    message, a usage line) are at its end."""
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
    return " | ".join(_cut(line, _STDERR_LINE_CHARS) for line in lines[-_STDERR_LINES:])


def command_not_found(server: str, command: str) -> str:
    return f"server {server!r} could not be started: command not found: {command!r}"


def cannot_execute(server: str, command: str, error: OSError) -> str:
    detail = error.strerror or type(error).__name__
    return f"server {server!r} could not be started: {command!r}: {detail}"


def exited_at_start(server: str, stderr: str | None, ending: str | None = None,
                    stdout: str | None = None) -> str:
    """`ending`: how the process ended (`exit status 3`); `stdout`: the first line it wrote
    there that is not JSON-RPC."""
    details = [ending, None if stdout is None else f"stdout: {not_json_rpc_line(stdout)}",
               None if stderr is None else f"stderr: {stderr}"]
    said = "; ".join(detail for detail in details if detail)
    reason = f"server {server!r} exited before completing the MCP handshake"
    return f"{reason} ({said})" if said else reason


def not_json_rpc_line(line: str) -> str:
    return f"{_cut(line.strip(), _STDOUT_LINE_CHARS)!r} is not JSON-RPC"


def handshake_timeout(server: str, seconds: float) -> str:
    return f"server {server!r} did not complete the MCP handshake within {_seconds(seconds)}"


def not_speaking_json_rpc(server: str, first: str, seconds: float) -> str:
    """A stdio server wrote a line that is not JSON-RPC, and no handshake followed in `seconds`:
    no MCP server over stdio, or one that writes its log where its messages go."""
    return (f"server {server!r} writes to stdout what is not JSON-RPC (its first line: "
            f"{not_json_rpc_line(first).removesuffix(' is not JSON-RPC')}) and did not "
            f"complete the MCP handshake within {_seconds(seconds)} of it")


def unreachable(server: str, url: str, error: BaseException) -> str:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"server {server!r} could not be reached at {url}: {detail}"


def handshake_failed(server: str, error: BaseException) -> str:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"server {server!r} failed the MCP handshake: {detail}"


def closed_during_call(server: str, stderr: str | None, transport: str | None = None,
                       ending: str | None = None) -> str:
    """`transport` is the SDK's own account when it has more than "Connection closed";
    `ending`: how the process ended, when it did."""
    reason = f"server {server!r} closed the connection during the call"
    if transport:
        reason = f"{reason} ({transport.strip().splitlines()[0]})"
    details = "; ".join(d for d in (ending, None if stderr is None else f"stderr: {stderr}") if d)
    return f"{reason} ({details})" if details else reason


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


def needs_login(server: str, hint: str) -> str:
    """A server that asks for an OAuth login none is kept for; `hint`: the command that makes
    one."""
    return f"server {server!r} needs a login: {hint}"


def login_refused(server: str, hint: str) -> str:
    """The kept login was refused, and could not be renewed (revoked, or expired for good)."""
    return f"server {server!r} needs a login (its token was refused and could not be renewed): {hint}"


def needs_scope(server: str, scope: str | None, hint: str) -> str:
    """A step-up: the call needs a scope the kept login does not have."""
    wanted = f"with scope {scope!r}" if scope else "with more access"
    return f"server {server!r} needs a login {wanted}: {hint}"


def login_failed(server: str, error: BaseException) -> str:
    """A login that did not complete, with the first line of why."""
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"login to server {server!r} failed: {_cut(detail, _STDERR_LINE_CHARS)}"
