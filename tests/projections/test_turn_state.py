"""`evolve_turn`, one event kind at a time, and `plan_cap`'s cuts for several layouts."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from fuseforks.core.canonical import Usage
from fuseforks.core.names import REPEAT_LIMIT
from fuseforks.events.types import (
    EVENT_TYPES,
    FallbackSettled,
    ImageCut,
    ImageDelivery,
    ImageDrop,
    ImageMeta,
    ImagesCapped,
    ImagesDropped,
    ImagesNormalized,
    ImagesStripped,
    JpegResent,
    LlmRetried,
    LlmRetryStopped,
    PlacementChanged,
    PlacementLearned,
    RepeatDetected,
    RequestRefused,
    RequestSent,
    ResourceRead,
    ResponseReceived,
    ResultSent,
    RoundStarted,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolCallRecord,
    ToolResultRecorded,
    ToolsChanged,
    TurnEnded,
    TurnEvent,
    TurnInterrupted,
    TurnNotStarted,
    TurnStarted,
    TurnTakenOver,
)
from fuseforks.projections import fold
from fuseforks.projections.turn_state import (
    AssistantEntry,
    ToolEntry,
    TurnState,
    UserEntry,
    evolve_turn,
    plan_cap,
)


def digest(n: int) -> str:
    return hashlib.sha256(f"image {n}".encode()).hexdigest()


D1, D2, D3, D4, D5 = (digest(n) for n in range(1, 6))

START = TurnStarted(
    agent="a1", wire="anthropic", model="m", endpoint_host="h", language="en",
    request="Look at the camera.", system="Be brief.", max_rounds=8, image_cap=20,
    placement="native", summary_instruction="Answer now.",
)


def meta(d: str, size: int = 1000) -> ImageMeta:
    return ImageMeta(digest=d, source_format="JPEG", media_type="image/jpeg",
                     path="pass_through", width=64, height=48, size=size, source_size=size)


def result(call_id: str, digests: list[str], *, name: str = "cam__snap", body: str = "frame",
           ok: bool = True, attached: bool = True) -> ToolResultRecorded:
    return ToolResultRecorded(round=1, call_id=call_id, name=name, ok=ok, body=body,
                              image_digests=digests, attached=attached)


def called(call_id: str, name: str = "cam__snap", arguments: str = '{"zoom":2}') -> ToolCalled:
    return ToolCalled(round=1, call_id=call_id, server="cam", name=name, arguments=arguments)


def state_of(*events: TurnEvent) -> TurnState:
    return fold(evolve_turn, TurnState(), [START, *events])


def tool_entries(state: TurnState) -> list[ToolEntry]:
    return [e for e in state.entries if isinstance(e, ToolEntry)]


# --- evolve_turn, per event kind ---------------------------------------------------------------


def test_turn_started_records_the_start_and_the_user_request_as_the_only_entry() -> None:
    assert evolve_turn(TurnState(), START) == TurnState(
        started=START, entries=(UserEntry("Look at the camera."),))


def test_round_started_sets_the_round() -> None:
    state = evolve_turn(state_of(), RoundStarted(round=3))
    assert state.round == 3
    assert state.entries == (UserEntry("Look at the camera."),)


def test_response_received_appends_an_assistant_entry_and_remembers_the_response() -> None:
    calls = [ToolCallRecord(call_id="c1", name="cam__snap", arguments='{"zoom":2}'),
             ToolCallRecord(call_id="c2", name="cam__status")]
    response = ResponseReceived(round=1, text="Let me look.", tool_calls=calls,
                                usage=Usage(input_tokens=10, output_tokens=2), stop_reason="tool_use")
    assert evolve_turn(state_of(), response) == TurnState(
        started=START,
        entries=(UserEntry("Look at the camera."), AssistantEntry("Let me look.", tuple(calls))),
        last_response=response,
    )


def test_tool_called_is_remembered_by_call_id() -> None:
    first, second = called("c1"), called("c2", "cam__status", "{}")
    state = state_of(first, second)
    assert state.calls == {"c1": first, "c2": second}
    assert state.entries == (UserEntry("Look at the camera."),)


def test_images_normalized_adds_the_metadata_by_digest() -> None:
    one = ImagesNormalized(round=1, call_id="c1", images=[meta(D1, 10), meta(D2, 20)])
    two = ImagesNormalized(round=1, call_id="c2", images=[meta(D3, 30)])
    assert state_of(one, two).images == {D1: meta(D1, 10), D2: meta(D2, 20), D3: meta(D3, 30)}


def test_an_attached_tool_result_carries_its_images() -> None:
    state = state_of(called("c1"), result("c1", [D1, D2], body="two frames"))
    assert state.entries[1:] == (ToolEntry(
        call_id="c1", name="cam__snap", body="two frames", is_error=False, images=(D1, D2),
        omitted=False, not_sent=False),)
    assert state.repeats == {("cam__snap", '{"zoom":2}', "two frames", (D1, D2)): 1}
    assert state.repeat_hit is None


def test_a_failed_tool_result_is_an_error_entry_without_images() -> None:
    state = state_of(result("c1", [], name="cam__status", body="offline", ok=False))
    assert tool_entries(state) == [ToolEntry(
        call_id="c1", name="cam__status", body="offline", is_error=True)]


def test_images_not_attached_are_left_off_and_marked_not_sent() -> None:
    state = state_of(result("c1", [D1, D2], attached=False))
    assert tool_entries(state) == [ToolEntry(
        call_id="c1", name="cam__snap", body="frame", is_error=False, images=(), not_sent=True)]


def test_a_text_only_result_that_is_not_attached_is_not_marked_not_sent() -> None:
    state = state_of(result("c1", [], attached=False))
    assert tool_entries(state)[0].not_sent is False


def test_a_result_without_its_tool_called_counts_with_empty_arguments() -> None:
    state = state_of(result("c9", [D1]))
    assert state.repeats == {("cam__snap", "{}", "frame", (D1,)): 1}


def test_identical_results_are_counted_and_hit_the_repeat_limit_on_the_limit_th() -> None:
    state = state_of()
    key = ("cam__snap", '{"zoom":2}', "frame", (D1,))
    for n in range(1, REPEAT_LIMIT):
        state = evolve_turn(evolve_turn(state, called(f"c{n}")), result(f"c{n}", [D1]))
        assert state.repeats == {key: n}
        assert state.repeat_hit is None
    state = evolve_turn(evolve_turn(state, called("last")), result("last", [D1]))
    assert state.repeats == {key: REPEAT_LIMIT}
    assert state.repeat_hit == "cam__snap"


def test_results_differing_in_arguments_body_or_images_are_counted_apart() -> None:
    state = state_of(
        called("c1"), result("c1", [D1]),
        called("c2", arguments='{"zoom":3}'), result("c2", [D1]),
        called("c3"), result("c3", [D1], body="other"),
        called("c4"), result("c4", [D2]),
        called("c5"), result("c5", [D1]),
    )
    assert state.repeats == {
        ("cam__snap", '{"zoom":2}', "frame", (D1,)): 2,
        ("cam__snap", '{"zoom":3}', "frame", (D1,)): 1,
        ("cam__snap", '{"zoom":2}', "other", (D1,)): 1,
        ("cam__snap", '{"zoom":2}', "frame", (D2,)): 1,
    }
    assert state.repeat_hit is None


def repeated(name: str, times: int, prefix: str) -> list[TurnEvent]:
    events: list[TurnEvent] = []
    for n in range(times):
        events += [called(f"{prefix}{n}", name, "{}"), result(f"{prefix}{n}", [], name=name)]
    return events


def test_the_first_tool_to_hit_the_limit_is_kept_until_the_stop_is_recorded() -> None:
    state = state_of(*repeated("cam__snap", REPEAT_LIMIT, "a"), *repeated("cam__status", REPEAT_LIMIT, "b"))
    assert state.repeat_hit == "cam__snap"


def test_repeat_detected_clears_the_hit_and_the_next_identical_result_hits_again() -> None:
    state = state_of(*repeated("cam__snap", REPEAT_LIMIT, "a"))
    cleared = evolve_turn(state, RepeatDetected(round=1, name="cam__snap", count=REPEAT_LIMIT))
    assert cleared.repeat_hit is None
    assert cleared.repeats == state.repeats  # the counts stay
    again = fold(evolve_turn, cleared, repeated("cam__snap", 1, "z"))
    assert again.repeat_hit == "cam__snap"
    assert again.repeats == {("cam__snap", "{}", "frame", ()): REPEAT_LIMIT + 1}


def test_images_capped_keeps_the_first_keep_images_and_marks_omitted() -> None:
    state = state_of(result("c1", [D1, D2, D3]), result("c2", [D4]), result("c3", [D5]))
    capped = evolve_turn(state, ImagesCapped(
        round=2, removed=3, kept=2, removed_digests=[D2, D3, D4],
        cuts=[ImageCut(call_id="c1", keep=1, removed=2), ImageCut(call_id="c2", keep=0, removed=1)]))
    assert tool_entries(capped) == [
        ToolEntry(call_id="c1", name="cam__snap", body="frame", is_error=False, images=(D1,),
                  omitted=True),
        ToolEntry(call_id="c2", name="cam__snap", body="frame", is_error=False, images=(),
                  omitted=True),
        ToolEntry(call_id="c3", name="cam__snap", body="frame", is_error=False, images=(D5,)),
    ]
    assert capped.entries[0] == UserEntry("Look at the camera.")
    assert capped.attached_images == [("c1", D1), ("c3", D5)]


def test_images_stripped_empties_every_result_marks_not_sent_and_starts_the_fallback() -> None:
    state = state_of(result("c1", [D1, D2]), result("c2", [], name="cam__status", body="ok"),
                     result("c3", [D3]))
    stripped = evolve_turn(state, ImagesStripped(round=2, model="m", removed=3,
                                                 digests=[D1, D2, D3], call_ids=["c1", "c3"]))
    assert tool_entries(stripped) == [
        ToolEntry(call_id="c1", name="cam__snap", body="frame", is_error=False, not_sent=True),
        ToolEntry(call_id="c2", name="cam__status", body="ok", is_error=False),
        ToolEntry(call_id="c3", name="cam__snap", body="frame", is_error=False, not_sent=True),
    ]
    assert stripped.fallback_active is True
    assert stripped.attached_images == []
    assert state.fallback_active is False


def test_turn_ended_records_the_end() -> None:
    end = TurnEnded(rounds=2, stop="answered", answer="Green.")
    before = state_of(result("c1", [D1]))
    assert before.ended is None
    assert evolve_turn(before, end) == msgspec.structs.replace(before, ended=end)


UNCHANGING: list[TurnEvent] = [
    RequestSent(round=1, wire="anthropic", model="m", endpoint_host="h", message_count=3,
                images=[ImageDelivery(digest=D1, call_id="c1", placement="native")]),
    LlmRetried(round=1, attempt=1, status=429, error_class="rate_limited", delay_ms=10),
    LlmRetryStopped(round=1, attempt=3, status=500, error_class="server_error"),
    JpegResent(round=1, model="m", converted=1),
    ImagesDropped(round=1, call_id="c1", name="cam__snap",
                  drops=[ImageDrop(index=4, reason="too_many")]),
    RequestRefused(round=1, status=400, message="bad image", images_rejected=True),
    FallbackSettled(round=1, model="m", removed=1, outcome="ok"),
    TurnInterrupted(round=1, cause="SIGINT", during="tools"),
    TurnNotStarted(agent="a", wire="carrier-pigeon", model="m", language="en", request="r"),
    ResourceRead(round=1, call_id="c1", uri="file:///notes.txt", outcome="read", digest=D1,
                 size=3),
]


@pytest.mark.parametrize("event", UNCHANGING, ids=lambda e: type(e).__name__)
def test_kinds_that_do_not_change_the_state_leave_it_equal(event: TurnEvent) -> None:
    state = state_of(RoundStarted(round=1), called("c1"), ImagesNormalized(
        round=1, call_id="c1", images=[meta(D1)]), result("c1", [D1]))
    assert evolve_turn(state, event) == state


def test_a_placement_change_moves_the_images_and_learning_is_kept_once() -> None:
    state = state_of(RoundStarted(round=1))
    assert state.placement == "native"
    moved = evolve_turn(state, PlacementChanged(round=1, model="m", placement="alternate"))
    assert moved.placement == "alternate" and moved.entries == state.entries
    learned = PlacementLearned(round=1, wire="anthropic", model="m", endpoint_host="h",
                               placement="native", outcome="refused")
    once = evolve_turn(moved, learned)
    assert once.learned == frozenset({("native", "refused")})
    assert evolve_turn(once, learned) == once


def test_a_takeover_takes_the_lost_images_off_the_list_and_notes_it_once() -> None:
    state = state_of(RoundStarted(round=1), called("c1"), called("c2"), ImagesNormalized(
        round=1, call_id="c1", images=[meta(D1)]), result("c1", [D1]), result("c2", []))
    taken = evolve_turn(state, TurnTakenOver(round=1, worker="w", endpoint_host="h",
                                             images_lost=[D1, "b" * 64], calls_lost=["c9"]))
    first, second = [e for e in taken.entries if isinstance(e, ToolEntry)]
    assert (first.images, first.offsets, first.lost) == ((), (), True)
    assert second == [e for e in state.entries if isinstance(e, ToolEntry)][1]  # had no image
    assert taken.attached_images == []
    assert taken.calls == state.calls and taken.round == state.round


def test_every_event_kind_is_covered_here() -> None:
    changing = {TurnStarted, RoundStarted, ResponseReceived, ToolCalled, ImagesNormalized,
                ToolResultRecorded, ImagesCapped, ImagesStripped, RepeatDetected, TurnEnded,
                PlacementChanged, PlacementLearned, TurnTakenOver}
    # a gateway session's: no turn has them
    sessions = {SessionStarted, ToolsChanged, ResultSent, SessionEnded}
    assert changing | sessions | {type(e) for e in UNCHANGING} == set(EVENT_TYPES)


# --- plan_cap ----------------------------------------------------------------------------------


def images_state(*counts: int) -> TurnState:
    """Results c1, c2, ... with `counts[i]` images each (digests numbered across the results)."""
    events: list[TurnEvent] = []
    number = 0
    for i, count in enumerate(counts, 1):
        digests = [digest(number + k) for k in range(count)]
        number += count
        events.append(result(f"c{i}", digests))
    return state_of(*events)


def test_under_or_at_the_cap_nothing_is_cut() -> None:
    assert plan_cap(images_state(1, 2, 1), 20) == []
    assert plan_cap(images_state(1, 2, 1), 4) == []
    assert plan_cap(state_of(), 0) == []


def test_twenty_one_single_image_results_take_the_image_of_the_oldest_off() -> None:
    assert plan_cap(images_state(*[1] * 21), 20) == [ImageCut(call_id="c1", keep=0, removed=1)]


def test_a_result_straddling_the_boundary_keeps_its_first_images() -> None:
    state = images_state(2, 3, 2)  # c1: d0 d1, c2: d2 d3 d4, c3: d5 d6
    cuts = plan_cap(state, 4)
    assert cuts == [ImageCut(call_id="c1", keep=0, removed=2),
                    ImageCut(call_id="c2", keep=2, removed=1)]
    capped = evolve_turn(state, ImagesCapped(round=2, removed=3, kept=4, cuts=cuts))
    assert capped.attached_images == [
        ("c2", digest(2)), ("c2", digest(3)), ("c3", digest(5)), ("c3", digest(6))]


def test_the_newest_result_alone_over_the_cap_keeps_its_first_images() -> None:
    assert plan_cap(images_state(1, 4), 3) == [ImageCut(call_id="c1", keep=0, removed=1),
                                               ImageCut(call_id="c2", keep=3, removed=1)]


def test_cap_zero_cuts_every_result_with_images_and_skips_text_only_ones() -> None:
    state = state_of(result("c1", [D1, D2]), result("c2", [], body="text only"),
                     result("c3", [D3]))
    assert plan_cap(state, 0) == [ImageCut(call_id="c1", keep=0, removed=2),
                                  ImageCut(call_id="c3", keep=0, removed=1)]


def test_images_already_cut_are_not_counted_again() -> None:
    state = images_state(2, 2, 2)
    once = evolve_turn(state, ImagesCapped(round=2, removed=2, kept=4,
                                           cuts=plan_cap(state, 4)))
    assert plan_cap(once, 4) == []
    assert plan_cap(once, 3) == [ImageCut(call_id="c2", keep=1, removed=1)]
