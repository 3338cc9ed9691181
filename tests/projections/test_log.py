from __future__ import annotations

from fuseforks.events.types import SessionStarted, ToolResultRecorded, TurnStarted
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.projections.log import SILENT, render, value
from tests.events.samples import D1, SAMPLES


def test_the_log_projection_of_every_event_kind() -> None:
    assert fold(evolve_log, LogState(), SAMPLES).lines == (
        "tool server down: agent=agent_9 server=\"cam 2\" reason=\"command not found: 'cam2'\"",
        "llm retry: agent=agent_9 round=1 attempt=1 status=429 class=rate_limited delay_ms=1500",
        "llm retry stop: agent=agent_9 round=1 attempt=1 status=400 class=client_error "
        "code=invalid_request",
        "attachment fallback: agent=agent_9 model=m converted=2",
        "tool image dropped: agent=agent_9 name=t reason=too_many",
        "tool: agent=agent_9 round=1 name=t ok=false body_chars=1 images=2",
        "tool image capped: agent=agent_9 round=3 removed=1 kept=20",
        "tool image placement: agent=agent_9 round=2 model=m placement=alternate",
        "tool image fallback: agent=agent_9 model=m removed=2 outcome=failed",
        "tool repeat: agent=agent_9 round=4 name=t count=3",
        "turn interrupted: agent=agent_9 round=4 cause=SIGTERM during=tools",
        "turn taken over: agent=agent_9 round=2 worker=worker-b images_lost=2 calls_lost=1",
        "turn: agent=agent_9 backend=anthropic model=claude-sonnet-5-5 rounds=4 stop=repeat",
        "session: agent=agent_9 client=\"claude-code 2.1.0\" calls=1 stop=closed unanswered=1",
    )


def test_images_field_appears_only_when_the_result_carried_images() -> None:
    start = TurnStarted(max_rounds=8, image_cap=20, placement="native", summary_instruction="S", agent="a", wire="gemini", model="g", endpoint_host="h", language="en",
                        request="r")
    text_only = ToolResultRecorded(round=1, call_id="c", name="status", ok=True, body="ready")
    with_image = ToolResultRecorded(round=1, call_id="d", name="cam", ok=True, body="",
                                    image_digests=[D1])
    assert fold(evolve_log, LogState(), [start, text_only, with_image]).lines == (
        "tool: agent=a round=1 name=status ok=true body_chars=5",
        "tool: agent=a round=1 name=cam ok=true body_chars=0 images=1",
    )


def test_values_with_spaces_or_equals_are_quoted() -> None:
    assert value("agent 9") == '"agent 9"'
    assert value("a=b") == '"a=b"'
    assert value("") == '""'
    assert value("gpt-oss-120b") == "gpt-oss-120b"
    assert value(True) == "true"


def test_fold_is_pure_the_initial_state_is_not_changed() -> None:
    initial = LogState()
    fold(evolve_log, initial, SAMPLES)
    assert initial == LogState()


def test_the_silent_shortcut_skips_exactly_the_kinds_that_render_no_line() -> None:
    state = fold(evolve_log, LogState(), SAMPLES[:1])
    silent = {type(e) for e in SAMPLES
              if not render(state, e) and not isinstance(e, TurnStarted | SessionStarted)}
    assert silent == SILENT
