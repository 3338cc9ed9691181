"""Whether an `mcpServers` entry runs this very gateway: `fuseforks gateway` (the `fuseforks`
executable by any path, or `python -m fuseforks`) on the same config file. A client's own
mcpServers file holds the gateway's entry; pointed at that file, the gateway would start itself,
which starts itself again, without end. A gateway on another config file is a chain, and is a
server like any other."""

from __future__ import annotations

from pathlib import Path

from fuseforks.mcp.config import ServerConfig, StdioServer

_EXECUTABLES = frozenset({"fuseforks", "fuseforks.exe"})


def _fuseforks_arguments(server: StdioServer) -> list[str] | None:
    """The arguments the entry gives the `fuseforks` command, if it runs it."""
    if Path(server.command).name.lower() in _EXECUTABLES:
        return server.args
    for index, arg in enumerate(server.args):
        if arg == "-m":
            module = server.args[index + 1:index + 2]
            return server.args[index + 2:] if module == ["fuseforks"] else None
        if not arg.startswith("-"):  # the interpreter runs a script, not a module
            return None
    return None


def _config_argument(arguments: list[str]) -> str | None:
    """The `--config` value, the last one given as click takes it."""
    found = None
    for index, arg in enumerate(arguments):
        if arg == "--config" and index + 1 < len(arguments):
            found = arguments[index + 1]
        elif arg.startswith("--config="):
            found = arg.removeprefix("--config=")
    return found


def _gateway_arguments(server: ServerConfig) -> list[str] | None:
    """The arguments after `gateway`, when `server` runs `fuseforks gateway`."""
    if not isinstance(server, StdioServer):
        return None
    arguments = _fuseforks_arguments(server)
    if not arguments or arguments[0] != "gateway":
        return None
    return arguments[1:]


def runs_a_gateway(server: ServerConfig) -> bool:
    """Whether `server` runs `fuseforks gateway`, on any config file."""
    return _gateway_arguments(server) is not None


def runs_this_gateway(server: ServerConfig, config: Path) -> bool:
    """Whether `server` runs `fuseforks gateway` on the config file `config` (paths compared
    resolved, the entry's relative to its `cwd`)."""
    arguments = _gateway_arguments(server)
    if arguments is None:
        return False
    assert isinstance(server, StdioServer)
    given = _config_argument(arguments)
    if given is None:
        return False
    folder = Path(server.cwd) if server.cwd else Path.cwd()
    return (folder / given).resolve() == config.resolve()
