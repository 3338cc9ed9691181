"""A turn's text on the terminal as it arrives, between the log lines, for `run` and `chat`."""

from __future__ import annotations

from collections.abc import Callable

import click

from fuseforks.ports.model import TextDelta

RESTART_NOTE = "the answer was cut off; it starts again"


class TextView:
    """Writes each piece of a model's text to stdout as it arrives (flushed) and each log line
    whole on a line of its own. When a call's text starts again (its stream was cut and the
    request sent again), the partial text stays, a new line begins and `note` says why."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self._note = note
        self._open = False  # the last text written did not end its line
        self._call: tuple[int, str] | None = None
        self._attempt = 0
        self._text: list[str] = []

    def begin(self) -> None:
        """A new turn: nothing of its text has been shown."""
        self.end_line()
        self._call, self._attempt, self._text = None, 0, []

    def text(self, delta: TextDelta) -> None:
        call = (delta.round, delta.purpose)
        if call != self._call or delta.attempt != self._attempt:
            if call == self._call:
                self.end_line()
                self._note(RESTART_NOTE)
            self._call, self._attempt, self._text = call, delta.attempt, []
        self._text.append(delta.text)
        click.echo(delta.text, nl=False)
        self._open = not delta.text.endswith("\n")

    def line(self, line: str) -> None:
        self.end_line()
        click.echo(line)

    def end_line(self) -> None:
        if self._open:
            click.echo("")
            self._open = False

    def shown(self, answer: str) -> bool:
        """`answer` is the text the last call showed: it is on the screen already."""
        return bool(answer) and "".join(self._text) == answer
