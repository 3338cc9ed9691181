"""`fuseforks run`: one live turn against a real provider and real MCP servers, through `Agent`."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import click

from fuseforks.agent import Agent, TurnResult
from fuseforks.bus.bus import SubscriberFailure
from fuseforks.cli.entry import stopping_means
from fuseforks.cli.options import (
    agent_options,
    build_agent_kwargs,
    check_conversation,
    not_empty,
    stream_option,
)
from fuseforks.cli.signals import Interrupts
from fuseforks.cli.text_view import TextView
from fuseforks.core.errors import FuseforksError, RecordingFailed


def _progress(text: str) -> None:
    click.echo(f"… {text}", err=True)


def _report_failure(failure: SubscriberFailure) -> None:
    click.echo(f"fuseforks: {failure.subscriber} stopped: {failure.error} (the turn goes on)",
               err=True)


def first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


NOT_STARTED = "before the turn started: nothing was sent or recorded"


def not_sent(start_faults: dict[str, str]) -> str:
    """Why a command sends nothing: the servers that did not start, and how to go on without."""
    return (f"not sent: {'; '.join(start_faults.values())} (--allow-missing-servers sends turns "
            "without the tools of a server that did not start)")


async def _run(kwargs: dict[str, Any], request: str, conversation: str | None,
               stream: bool = True) -> int:
    interrupts = Interrupts()
    result: TurnResult | None = None
    refused: dict[str, str] = {}
    view = TextView(_progress) if stream else None
    try:
        async with interrupts.watching():
            with interrupts.scope:
                async with Agent(on_log_line=view.line if view else click.echo,
                                 on_progress=_progress, on_failure=_report_failure,
                                 **kwargs) as agent:
                    if not agent.settings.allow_missing_servers:
                        refused = agent.start_faults  # the turn is recorded as not sent
                    for server, reason in agent.start_faults.items() if not refused else ():
                        _progress(f"MCP server {server} did not start: {reason} (the turn goes "
                                  "on without its tools)")
                    if conversation == "last":
                        conversation = await agent.last_conversation()
                        if conversation is None:
                            raise click.ClickException("--conversation last: the store has no "
                                                       "conversation yet")
                    elif conversation == "new":
                        conversation = None
                    interrupts.attach(agent)
                    result = await agent.run(request, conversation=conversation,
                                             on_text=view.text if view else None)
                    interrupts.detach()
    except* RecordingFailed as group:
        raise click.ClickException(
            f"the turn stopped: the record could not be written ({first_leaf(group)}); "
            "what was recorded before is kept") from None
    except* click.ClickException as group:
        raise first_leaf(group) from None
    finally:
        if view is not None:
            view.end_line()
    if result is None:
        click.echo(f"stopped ({interrupts.cause or 'cancelled'}) {NOT_STARTED}", err=True)
        return interrupts.exit_code or 1
    if result.stop == "interrupted":
        click.echo(f"turn interrupted ({interrupts.cause or 'cancelled'})", err=True)
        return interrupts.exit_code or 1
    if result.answer and not (view is not None and view.shown(result.answer)):
        click.echo(f"\n{result.answer}")
    if refused and result.rounds == 0:  # recorded as not started: said with the way out
        click.echo(f"Error: {not_sent(refused)}", err=True)
        return 1
    if result.error:
        click.echo(f"turn failed: {result.error}", err=True)
        return 1
    return 0


@click.command(epilog="""\b
Examples:
  ANTHROPIC_API_KEY=... fuseforks run --wire anthropic --model claude-sonnet-5-5 \\
      --mcp-config mcp.json "Take a picture and describe it."
  fuseforks run --wire openai-compat --model llama3 --base-url http://127.0.0.1:8080/v1 "Hi"
  fuseforks run ... --conversation last "And what changed since then?"

A local OpenAI-compatible server (a --base-url on 127.0.0.1 or localhost) needs no key.""")
@agent_options
@click.option("--conversation", default="new", show_default=True,
              help="The conversation the turn belongs to: `new`, `last` (the most recent one "
                   "in the store), or the id of one the store holds. Earlier exchanges are sent "
                   "as text only.")
@stream_option
@click.argument("request")
def run(request: str, conversation: str, no_stream: bool, **options: Any) -> None:
    """Run one turn against a real provider, with MCP tools.

    Sends REQUEST to the model, calls the MCP tools it asks for, and prints the model's text as
    it arrives, with the log lines as they happen (progress on stderr). The key comes from the
    wire's environment variable; the turn is recorded into the store and the log."""
    stopping_means(NOT_STARTED)
    not_empty(request, click.Argument(["request"]))
    kwargs = build_agent_kwargs(options)
    check_conversation(options["db"], conversation)
    try:
        code = anyio.run(_run, kwargs, request, conversation, not no_stream)
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    except OSError as error:
        raise click.ClickException(f"{error.filename or options['db']}: {error.strerror}") from error
    sys.exit(code)
