"""The help a new user reads: `fuseforks --help` is fast because it imports no command, and each
command's help describes every option and ends with an example."""

from __future__ import annotations

import re
import sys

import click
import pytest
from click.testing import CliRunner

from fuseforks.cli import COMMANDS, main
from tests.helpers import processes

OWN = ["audit", "console", "demo", "export", "import", "log", "replay", "run", "simulator", "turns"]
"""Commands whose help this suite holds to the rules; `image` and `mcp` keep their own."""

PROBE = """
import runpy, sys
sys.argv = ["fuseforks", "--help"]
try:
    runpy.run_module("fuseforks", run_name="__main__")
except SystemExit as done:
    assert done.code in (0, None), done.code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "httpx", "anyio", "PIL",
                                                              "sqlite_utils", "msgspec"))
print(",".join(heavy))
print(",".join(sorted(m for m in sys.modules if m.startswith("fuseforks.cli."))))
"""


def test_help_imports_no_command_nor_mcp_nor_httpx() -> None:
    done = processes.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    heavy, commands = done.stdout.splitlines()[-2:]
    assert (heavy, commands) == ("", "fuseforks.cli.entry")
    assert "Commands:" in done.stdout


def test_the_listing_says_what_each_command_says_of_itself() -> None:
    ctx = click.Context(main)
    for name, entry in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None
        assert command.get_short_help_str(limit=1000) == entry.summary, name
    listing = CliRunner().invoke(main, ["--help"]).stdout
    assert [line.split()[0] for line in listing.split("Commands:\n")[1].splitlines()
            if line.startswith("  ") and not line.startswith("   ")][:len(COMMANDS)] == sorted(
        COMMANDS)


@pytest.mark.parametrize("name", OWN)
def test_each_command_describes_every_option_and_shows_an_example(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    undescribed = [p.name for p in command.params
                   if isinstance(p, click.Option) and not p.help]
    assert undescribed == []
    assert command.epilog is not None
    examples = [line.strip() for line in command.epilog.splitlines()
                if line.strip().startswith("fuseforks ")]
    assert examples and all(e.startswith(f"fuseforks {name} ") for e in examples[:1]), examples
    text = CliRunner().invoke(main, [name, "--help"]).stdout
    assert re.search(r"\bp4\b|RepeatGuard|backend=", text) is None, text


def test_the_store_and_bus_variables_are_named_where_they_work() -> None:
    runner = CliRunner()
    for command, names in {"worker": ["FUSEFORKS_DB", "FUSEFORKS_NATS"],
                           "submit": ["FUSEFORKS_NATS"], "log": ["FUSEFORKS_NATS"],
                           "run": ["FUSEFORKS_DB"], "chat": ["FUSEFORKS_DB"],
                           "demo": ["FUSEFORKS_DB"], "import": ["FUSEFORKS_DB"]}.items():
        shown = " ".join(runner.invoke(main, [command, "--help"]).output.split())
        for name in names:
            assert f"env var: {name}" in shown, (command, name)


def test_log_says_source_is_not_given_with_follow() -> None:
    shown = CliRunner().invoke(main, ["log", "--help"]).output
    assert "With --follow, no SOURCE" in " ".join(shown.split())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_usage_line_brackets_every_argument_a_command_can_do_without(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    usage = CliRunner().invoke(main, [name, "--help"]).stdout.splitlines()[0]
    for argument in (p for p in command.params if isinstance(p, click.Argument)):
        shown = argument.make_metavar(click.Context(command))
        if argument.required:
            assert f" {shown}" in usage and f"[{shown}]" not in usage, usage
        else:
            assert shown.startswith("[") and f" {shown}" in usage, usage
