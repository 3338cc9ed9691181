"""The `fuseforks` command line.

Subcommands live one per module and are imported only when invoked: `fuseforks --help` lists them
from the table below without importing any of them (each module pulls in the engine, the MCP SDK
or an HTTP client), and a broken optional piece cannot stop the others from running.

Every error ends in one line on stderr and an exit code — 2 for a usage error (a bad option or
argument), 1 for a failure — never in a traceback for anything fuseforks expects to go wrong.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple, NoReturn

import click

from fuseforks.core.errors import FuseforksError


class Entry(NamedTuple):
    target: str
    """`module:attribute` of a click command or group."""
    summary: str
    """The line `fuseforks --help` shows; the command's own short help says the same."""


COMMANDS: dict[str, Entry] = {
    "audit": Entry("fuseforks.cli.audit:audit",
                   "Which tool images went to which provider, from which tool."),
    "capabilities": Entry("fuseforks.cli.capabilities:capabilities_command",
                          "Show where each model took tool images, learned from recorded turns."),
    "chat": Entry("fuseforks.cli.chat:chat",
                  "Talk to an agent in this terminal: one conversation, turn after turn."),
    "clients": Entry("fuseforks.cli.clients:clients",
                     "What the gateway did for each MCP client."),
    "cluster": Entry("fuseforks.cli.cluster:cluster",
                     "Start PostgreSQL, NATS, workers, the provider simulator and the demo camera "
                     "on this machine."),
    "console": Entry("fuseforks.cli.console:console",
                     "Serve a read-only web page over a store or a stream."),
    "copy": Entry("fuseforks.cli.transfer:copy", "Copy the turns of one store into another."),
    "demo": Entry("fuseforks.cli.demo:demo",
                  "Run the offline demo: every provider wire and an image-refusing model."),
    "export": Entry("fuseforks.cli.transfer:export",
                    "Write the turns of a store as a JSON Lines stream."),
    "gateway": Entry("fuseforks.cli.gateway:gateway",
                     "Stand in front of MCP servers for any MCP client, with the image rules."),
    "image": Entry("fuseforks.cli.image:image",
                   "Look at images the way the engine will send them."),
    "import": Entry("fuseforks.cli.transfer:import_",
                    "Add the turns of a JSON Lines stream to a store."),
    "log": Entry("fuseforks.cli.log:log", "Print the log lines of recorded turns."),
    "mcp": Entry("fuseforks.cli.mcp:mcp",
                 "Check MCP servers: list their tools, call one and see what the model would get."),
    "rebuild": Entry("fuseforks.cli.rebuild:rebuild",
                     "Build the read model of STORE again from its events."),
    "replay": Entry("fuseforks.cli.replay:replay",
                    "Show recorded turns; --verify re-drives today's engine on them."),
    "run": Entry("fuseforks.cli.run:run", "Run one turn against a real provider, with MCP tools."),
    "simulator": Entry("fuseforks.cli.simulator:simulator",
                       "Serve every provider wire on 127.0.0.1 (tests, the demo)."),
    "submit": Entry("fuseforks.cli.submit:submit",
                    "Put a turn request on the work queue and print the turn id."),
    "turns": Entry("fuseforks.cli.turns:turns", "List the recorded turns of a store or stream."),
    "worker": Entry("fuseforks.cli.worker:worker",
                    "Run turns from the work queue, recording them in a shared PostgreSQL store."),
}

PROG = "fuseforks"


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute = entry.target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        from fuseforks.cli.entry import stopping_means

        stopping_means("")  # the command is loaded: from here it says what a stop means
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the table: listing does not import a single command."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name].summary) for name in self.list_commands(ctx)])

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        prog_name = prog_name or PROG
        _quiet_libraries()
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            outcome = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as error:
            error.show()
            sys.exit(error.exit_code)
        except click.UsageError as error:
            command = error.ctx.command_path if error.ctx is not None else prog_name
            text = error.format_message().strip()
            stop = "" if text.endswith((".", "!", "?")) else "."
            click.echo(f"Error: {text}{stop} Try '{command} --help'.", err=True)
            sys.exit(error.exit_code)
        except click.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        except FuseforksError as error:  # a path a command did not translate itself
            click.echo(f"Error: {error}", err=True)
            sys.exit(1)
        except BaseExceptionGroup as group:  # the same, from inside a task group
            if group.split(BrokenPipeError)[1] is None:
                _reader_left()
            known, unknown = group.split(FuseforksError)
            if known is None or unknown is not None:
                raise
            click.echo(f"Error: {_first(known)}", err=True)
            sys.exit(1)
        except BrokenPipeError:  # `fuseforks log db | head`: the reader left, nothing to say
            _reader_left()
        except OSError as error:
            where = f": {error.filename}" if error.filename else ""
            click.echo(f"Error: {error.strerror or error}{where}", err=True)
            sys.exit(1)
        # Without standalone mode click returns an exit code from `ctx.exit(code)` (e.g. --help)
        # and a command's own return value otherwise; commands return None.
        sys.exit(outcome if isinstance(outcome, int) else 0)


QUIET_LOGGERS = ("mcp", "fuseforks.mcp")
"""Loggers whose records a command never prints: the MCP SDK logs a traceback for each line a
server writes that is not JSON-RPC, and the tool hub logs each fault; the commands say what
went wrong themselves, once, in their own words (a server that did not start, a tool's error)."""


def _quiet_libraries() -> None:
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _reader_left() -> NoReturn:
    """The reader of our output left (`| head`): nothing to say, nowhere to say it."""
    sys.stdout = open(  # noqa: SIM115 - replaces the closed pipe until exit
        os.devnull, "w", encoding="utf-8")
    sys.exit(1)


def _first(group: BaseExceptionGroup[FuseforksError]) -> BaseException:
    """The first error inside (nested) exception groups."""
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


@click.group(cls=LazyGroup, name=PROG, epilog="""\b
Example:
  fuseforks demo && fuseforks turns fuseforks.db

Each command has its own help: fuseforks COMMAND --help.""")
@click.version_option(package_name="fuseforks")
def main() -> None:
    """An event-sourced turn engine for LLM agents that call MCP tools: runs turns against seven
    provider wires, records every fact of a turn, and replays and audits the record — including
    which tool images went to which provider."""
