from __future__ import annotations

from fuseforks.events.types import (
    LlmRetryStopped,
    SessionStarted,
    ToolResultRecorded,
    TurnEnded,
    TurnNotStarted,
    TurnStarted,
)
from fuseforks.projections import LogState, evolve_log, fold
from fuseforks.projections.log import SILENT, render, value
from fuseforks.projections.words import call_end
from tests.events.samples import D1, SAMPLES


def test_the_log_projection_of_every_event_kind() -> None:
    assert fold(evolve_log, LogState(), SAMPLES).lines == (
        "tool server down: agent=agent_9 server=\"cam 2\" reason=\"command not found: 'cam2'\"",
        "llm retry: agent=agent_9 round=1 attempt=1 status=429 class=rate_limited delay_ms=1500",
        "llm refused: agent=agent_9 round=1 status=400 class=client_error "
        "code=invalid_request",
        "attachment fallback: agent=agent_9 model=m converted=2",
        "tool resource read: agent=agent_9 round=1 uri=file:///shots/screen.png outcome=read "
        "bytes=2048",
        "tool image dropped: agent=agent_9 name=t reason=too_many",
        "tool: agent=agent_9 round=1 name=t ok=false body_chars=1 images=2",
        "tool image capped: agent=agent_9 round=3 removed=1 kept=20",
        "tool image placement: agent=agent_9 round=2 model=m placement=alternate",
        "tool image fallback: agent=agent_9 model=m removed=2 outcome=failed",
        "tool repeat: agent=agent_9 round=4 name=t count=3",
        "turn interrupted: agent=agent_9 round=4 cause=SIGTERM during=tools",
        "turn taken over: agent=agent_9 round=2 worker=worker-b from=worker-a images_lost=2 "
        "calls_lost=1",
        "turn: agent=agent_9 backend=anthropic model=claude-sonnet-5-5 rounds=4 stop=repeat",
        "session: agent=agent_9 client=\"claude-code 2.1.0\" calls=1 stop=closed unanswered=1",
    )


def test_a_turn_that_could_not_start_names_the_wire_it_was_given() -> None:
    not_started = TurnNotStarted(agent="u", wire="carrier-pigeon", model="m", language="en",
                                 request="r")
    ended = TurnEnded(rounds=0, stop="error", error="unknown wire 'carrier-pigeon'")
    assert fold(evolve_log, LogState(), [not_started, ended]).lines == (
        "turn: agent=u backend=carrier-pigeon model=m rounds=0 stop=error",)


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
              if not render(state, e)
              and not isinstance(e, TurnStarted | TurnNotStarted | SessionStarted)}
    assert silent == SILENT


async def test_a_reader_of_many_turns_sees_which_turn_each_line_belongs_to() -> None:
    """Four turns of one agent print the same lines; `log --follow` tells them apart by the
    turn's short id, while the `fuseforks.log` file keeps its lines as they are."""
    from fuseforks.bus.subscribers import LogWriter
    from fuseforks.events.sequencer import FixedClock, Sequencer

    start = TurnStarted(max_rounds=8, image_cap=20, placement="native", summary_instruction="S",
                        agent="a", wire="gemini", model="g", endpoint_host="h", language="en",
                        request="r")
    result = ToolResultRecorded(round=1, call_id="c", name="cam", ok=True, body="{}")
    ids = ["turn-" + "0123abcd" * 4, "turn-" + "9876fedc" * 4, "chosen-by-a-program"]
    named: list[str] = []
    plain: list[str] = []
    for writer in (LogWriter(named.append, name_turns=True), LogWriter(plain.append)):
        for turn_id in ids:
            await writer.handle(Sequencer(turn_id, FixedClock()).seal([start, result]))
    assert named == ["turn-0123abcd tool: agent=a round=1 name=cam ok=true body_chars=2",
                     "turn-9876fedc tool: agent=a round=1 name=cam ok=true body_chars=2",
                     "chosen-by-a-program tool: agent=a round=1 name=cam ok=true body_chars=2"]
    assert plain == ["tool: agent=a round=1 name=cam ok=true body_chars=2"] * 3


def test_a_call_given_up_on_is_named_for_how_it_ended_and_a_refusal_is_no_retry() -> None:
    ended = [LlmRetryStopped(round=2, attempt=1, status=400, error_class="client_error",
                             code="invalid_request"),
             LlmRetryStopped(round=2, attempt=1, status=None, error_class="garbage"),
             LlmRetryStopped(round=2, attempt=5, status=529, error_class="server_error",
                             code="overloaded_error")]
    assert [call_end(e) for e in ended] == ["refused", "failed", "gave_up"]
    assert fold(evolve_log, LogState(), ended).lines == (
        "llm refused: agent=- round=2 status=400 class=client_error code=invalid_request",
        "llm failed: agent=- round=2 status=- class=garbage code=-",
        "llm retry stop: agent=- round=2 attempts=5 status=529 class=server_error "
        "code=overloaded_error")
