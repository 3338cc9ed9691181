"""`fuseforks chat`: an interactive session — one conversation, turn after turn, in a terminal.

Each turn prints the model's text as it arrives (unless `--no-stream`: then the answer once it is
complete) and its log lines as they are recorded, with the display line of a tool's images
("(1 image: JPEG 21 KB)") under its tool line, then the turn's token usage.
Ctrl-C interrupts the turn in progress (recorded as interrupted) and the session goes on; at the
prompt it only reminds how to leave, and prompts again. Ctrl-D (or /quit) ends the session with
exit code 0 — pressed while a turn runs, once that turn has ended (a terminal keeps the Ctrl-D
for the next read, which comes after the turn; lines typed ahead are taken as the next requests).
"""

from __future__ import annotations

import os
import select
import signal
import sys
from collections import deque

try:  # line editing and history at the prompt, where available
    import readline
except ImportError:  # pragma: no cover - every Linux and macOS Python has it
    readline = None  # type: ignore[assignment]

import anyio
import click

from fuseforks.agent import Agent, Conversation, TurnResult
from fuseforks.bus.bus import Batch
from fuseforks.cli.entry import stopping_means
from fuseforks.cli.options import (
    agent_options,
    build_agent_kwargs,
    check_conversation,
    stream_option,
)
from fuseforks.cli.run import not_sent
from fuseforks.cli.text_view import TextView
from fuseforks.core.media import format_name
from fuseforks.core.texts import texts
from fuseforks.events.types import (
    ImageMeta,
    ImagesNormalized,
    ToolResultRecorded,
    TurnEnded,
    TurnStarted,
)
from fuseforks.projections.log import LogState, evolve_log

HELP = """commands: /new (a new conversation), /turns (this conversation's turns),
/audit (images the last turn sent), /quit (or Ctrl-D)"""


class ChatView:
    """Prints each recorded event's log lines as they come, and a tool's display line under it."""

    name = "chat view"

    def __init__(self, text: TextView | None = None) -> None:
        self.text = text
        self._echo = text.line if text is not None else click.echo
        self._state = LogState()
        self._images: dict[str, list[ImageMeta]] = {}
        self._language = "en"
        self._ended: dict[str, anyio.Event] = {}

    async def shown(self, turn_id: str) -> None:
        """Wait until the turn's last line is on the screen (the answer comes after it)."""
        await self._ended.setdefault(turn_id, anyio.Event()).wait()
        del self._ended[turn_id]

    async def handle(self, batch: Batch) -> None:
        for envelope in batch:
            event = envelope.event
            if isinstance(event, TurnStarted):
                self._state, self._images, self._language = LogState(), {}, event.language
            elif isinstance(event, ImagesNormalized):
                self._images[event.call_id] = list(event.images)
            before = len(self._state.lines)
            self._state = evolve_log(self._state, event)
            for line in self._state.lines[before:]:
                self._echo(line)
            if isinstance(event, ToolResultRecorded) and event.shown is not None:
                for line in event.shown.splitlines():  # content meant for the user
                    self._echo(f"  {line}")
            if isinstance(event, ToolResultRecorded) and self._images.get(event.call_id):
                shown = texts(self._language).display_line(
                    [(format_name(m.media_type), m.size) for m in self._images[event.call_id]])
                self._echo(f"  {shown}")
            if isinstance(event, TurnEnded):
                self._ended.setdefault(envelope.turn_id, anyio.Event()).set()


def audit_lines(result: TurnResult) -> list[str]:
    """`/audit`: each tool image the turn sent, where it was delivered and whether the model got
    it (`TurnResult.images`, read from the delivery fold)."""
    return [f"{i.digest} {i.format} {i.size} B {i.placement} {i.tool} "
            f"{'received' if i.received else 'not received'}" for i in result.images]


def _usage_line(result: TurnResult) -> str:
    u = result.usage
    return (f"[{result.stop}; rounds {result.rounds}; tokens in {u.input_tokens}, "
            f"out {u.output_tokens}]")


PROMPT = "you> "
QUIT_HINT = "(Ctrl-D or /quit ends the session)"
EOF_DURING_TURN = "(Ctrl-D during the turn: the session ends)"


async def _read(prompt: str) -> str | None:
    try:
        return await anyio.to_thread.run_sync(input, prompt, abandon_on_cancel=True)
    except EOFError:
        return None


def typed_during_turn() -> list[str] | None:
    """What the terminal holds from while a turn ran: the lines typed ahead, or None for a
    Ctrl-D. The prompt's line editor reads the terminal byte by byte and would lose a Ctrl-D
    pressed in the meantime, so it is read here first, the way the terminal hands it over."""
    if not sys.stdin.isatty():
        return []
    fd, lines = sys.stdin.fileno(), []
    while select.select([fd], [], [], 0)[0]:
        data = os.read(fd, 65536)
        if not data:
            return None
        lines += data.decode(errors="replace").splitlines()
    return lines


async def _session(agent: Agent, conversation: Conversation, view: ChatView) -> None:
    last: TurnResult | None = None
    running = False
    ahead: deque[str] = deque()  # lines typed while a turn ran

    async def watch_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                if running and agent.interrupt("SIGINT"):
                    continue
                typed = readline.get_line_buffer() if readline is not None else ""
                click.echo(f"\n{QUIT_HINT}")
                click.echo(PROMPT + typed, nl=False)

    async with anyio.create_task_group() as group:
        group.start_soon(watch_signals)
        click.echo(f"conversation {conversation.id} — {HELP}")
        while True:
            line = ahead.popleft() if ahead else await _read(PROMPT)
            if line is None or line.strip() == "/quit":
                click.echo("")
                break
            text = line.strip()
            if not text:
                continue
            if text == "/new":
                conversation = agent.conversation()
                click.echo(f"conversation {conversation.id}")
                continue
            if text == "/turns":
                turns = await conversation.turns()
                for turn in turns:
                    click.echo(f"{turn.at} {turn.turn_id} {turn.stop}: {turn.request[:60]}")
                if not turns:
                    click.echo("(no turns in this conversation yet)")
                continue
            if text == "/audit":
                for shown in audit_lines(last) if last else []:
                    click.echo(shown)
                continue
            if text.startswith("/"):
                click.echo(HELP)
                continue
            running = True
            if view.text is not None:
                view.text.begin()
            try:
                last = await conversation.run(
                    text, on_text=view.text.text if view.text is not None else None)
            finally:
                running = False
            with anyio.move_on_after(5):
                await view.shown(last.turn_id)
            if view.text is not None:
                view.text.end_line()
            if last.answer and not (view.text is not None and view.text.shown(last.answer)):
                click.echo(last.answer)
            if last.error:
                click.echo(f"turn failed: {last.error}")
            click.echo(_usage_line(last))
            typed = typed_during_turn()
            if typed is None:
                click.echo(EOF_DURING_TURN)
                break
            ahead.extend(typed)
        group.cancel_scope.cancel()


@click.command(epilog="""\b
Example:
  ANTHROPIC_API_KEY=... fuseforks chat --wire anthropic --model claude-sonnet-5-5 \\
      --mcp-config mcp.json

At the prompt: /new, /turns, /audit, /quit; Ctrl-C stops a turn, Ctrl-D ends the session.""")
@agent_options
@click.option("--conversation", "conversation_id", default=None,
              help="Continue this conversation (default: a new one).")
@stream_option
def chat(conversation_id: str | None, no_stream: bool, **options: object) -> None:
    """Talk to an agent in this terminal: one conversation, turn after turn."""
    stopping_means("before the session started: nothing was sent or recorded")
    kwargs = build_agent_kwargs(options)
    if conversation_id is not None:
        check_conversation(options["db"], conversation_id)  # type: ignore[arg-type]

    async def main() -> str | None:
        """The session; or, when a server did not start and that is not allowed, why not."""
        view = ChatView(None if no_stream else TextView(lambda note: click.echo(f"({note})")))
        async with Agent(subscribers=[view], **kwargs) as agent:
            if agent.start_faults and not agent.settings.allow_missing_servers:
                return not_sent(agent.start_faults)
            for server, reason in agent.start_faults.items():
                click.echo(f"MCP server {server} did not start: {reason} (the conversation "
                           "goes on without its tools)", err=True)
            await _session(agent, agent.conversation(conversation_id), view)
        return None

    refused = anyio.run(main)
    if refused is not None:
        raise click.ClickException(refused)

