"""The `fuseforks` command line.

Subcommands live one per module and are imported only when invoked, so `fuseforks --help` stays
fast and a broken optional piece cannot stop the others from running.
"""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command or group.
COMMANDS: dict[str, str] = {
    "audit": "fuseforks.cli.audit:audit",
    "demo": "fuseforks.cli.demo:demo",
    "export": "fuseforks.cli.transfer:export",
    "import": "fuseforks.cli.transfer:import_",
    "log": "fuseforks.cli.log:log",
    "replay": "fuseforks.cli.replay:replay",
    "run": "fuseforks.cli.run:run",
    "simulator": "fuseforks.cli.simulator:simulator",
    "mcp": "fuseforks.cli.mcp:mcp",
    "image": "fuseforks.cli.image:image",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup)
@click.version_option(package_name="fuseforks")
def main() -> None:
    """Event-sourced turn engine for LLM agents that call MCP tools."""
