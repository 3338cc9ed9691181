"""Where an image went, and whether it was received, on the placement ladder's first step: the
native placement refused, the alternate one received (`replays/p4-gemini-2.5.jsonl`). Every
reader of the delivery fold says the same: the result, the audit rows, the demo's table, chat's
`/audit` lines and the spans."""

from __future__ import annotations

from fuseforks.agent.result import SentImage, turn_result
from fuseforks.cli.chat import audit_lines
from fuseforks.demo.offline import delivered_placement
from fuseforks.engine.turn import TurnOutcome
from fuseforks.events.types import TurnEnded
from fuseforks.projections.audit import audit_rows
from fuseforks.projections.summary import turn_summary
from fuseforks.projections.words import images_shown
from fuseforks.traces import turn_spans
from tests.traces.support import recorded

LADDER = recorded("p4-gemini-2.5")
DIGEST = "052074359e0f886f7cb5463ffa08f99d9c9452c7fc964c0a8d41e03109414210"
TOOL = "nik__live_view_image"


def outcome() -> TurnOutcome:
    ended = LADDER[-1].event
    assert isinstance(ended, TurnEnded)
    return TurnOutcome(turn_id=LADDER[0].turn_id, answer=ended.answer, stop=ended.stop,
                       rounds=ended.rounds, error=ended.error, history=LADDER)


def test_the_result_says_the_image_was_received_in_the_alternate_placement() -> None:
    assert turn_result(outcome(), "c").images == [SentImage(
        digest=DIGEST, format="JPEG", size=5108, width=640, height=424, placement="alternate",
        tool=TOOL, received=True)]


def test_the_audit_rows_have_the_refused_native_and_the_received_alternate_delivery() -> None:
    rows = audit_rows(LADDER).deliveries
    assert [(r.digest, r.request_seq, r.purpose, r.placement, r.outcome, r.stripped, r.tool)
            for r in rows] == [
        (DIGEST, 9, "round", "native", "refused", False, TOOL),
        (DIGEST, 14, "resend", "alternate", "received", False, TOOL),
    ]


def test_the_demo_table_shows_the_alternate_placement_and_one_image_refused_once() -> None:
    assert (delivered_placement(LADDER), images_shown(turn_summary(LADDER))) == (
        "alternate", "1 (refused 1×)")


def test_chat_audit_lists_the_image_as_received_in_the_alternate_placement() -> None:
    assert audit_lines(turn_result(outcome(), "c")) == [
        f"{DIGEST} JPEG 5108 B alternate {TOOL} received"]


def test_the_spans_show_the_native_request_refused_and_the_alternate_one_received() -> None:
    chats = [s for s in turn_spans(LADDER) if s.name.startswith("chat ")]
    assert [(s.attributes.get("fuseforks.images.digests"),
             s.attributes.get("fuseforks.images.placements"),
             s.attributes["fuseforks.request.outcome"]) for s in chats] == [
        (None, None, "received"),
        ([DIGEST], ["native"], "refused"),
        ([DIGEST], ["alternate"], "received"),
    ]
