"""How `run` and `chat` lay a streamed answer out between the log lines."""

from __future__ import annotations

import pytest

from fuseforks.cli.text_view import RESTART_NOTE, TextView
from fuseforks.ports.model import TextDelta


def delta(text: str, round_: int = 1, attempt: int = 1) -> TextDelta:
    return TextDelta(round=round_, purpose="round", text=text, attempt=attempt)


def test_text_runs_on_and_each_log_line_starts_a_line_of_its_own(
        capsys: pytest.CaptureFixture[str]) -> None:
    notes: list[str] = []
    view = TextView(notes.append)
    view.text(delta("Let me "))
    view.text(delta("look."))
    view.line("tool: agent=a round=1 name=cam ok=true body_chars=3 images=1")
    view.text(delta("I see ", 2))
    view.text(delta("red.\n", 2))
    view.line("turn: agent=a backend=anthropic model=m rounds=2 stop=answered")
    view.end_line()
    assert capsys.readouterr().out == (
        "Let me look.\n"
        "tool: agent=a round=1 name=cam ok=true body_chars=3 images=1\n"
        "I see red.\n"
        "turn: agent=a backend=anthropic model=m rounds=2 stop=answered\n")
    assert view.shown("I see red.\n") and not view.shown("Let me look.")
    assert notes == []


def test_a_restarted_answer_begins_a_new_line_with_a_note_and_is_the_one_shown(
        capsys: pytest.CaptureFixture[str]) -> None:
    notes: list[str] = []
    view = TextView(notes.append)
    view.text(delta("I see "))
    view.text(delta("I see ", attempt=2))
    view.text(delta("red.", attempt=2))
    view.end_line()
    assert capsys.readouterr().out == "I see \nI see red.\n"
    assert notes == [RESTART_NOTE]
    assert view.shown("I see red.")
    view.begin()
    assert not view.shown("I see red.")
