"""`audit_rows`: where each image came from, and what became of every request that carried it."""

from __future__ import annotations

import hashlib

from fuseforks.core.names import RequestPurpose
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImageDelivery,
    ImageMeta,
    ImagesNormalized,
    ImagesStripped,
    LlmRetryStopped,
    RequestRefused,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ToolCalled,
    ToolResultRecorded,
    TurnEnded,
    TurnEvent,
    TurnStarted,
)
from fuseforks.projections.audit import (
    AuditRows,
    DeliveryRow,
    OriginRow,
    Outcome,
    TurnStop,
    audit_rows,
)

D1 = hashlib.sha256(b"frame one").hexdigest()
D2 = hashlib.sha256(b"frame two").hexdigest()
D3 = hashlib.sha256(b"frame three").hexdigest()


def at(seq: int) -> str:
    return f"2026-12-01T00:00:{seq:02d}.000Z"


def envelopes(turn_id: str, events: list[TurnEvent]) -> list[Envelope]:
    return [Envelope(turn_id=turn_id, seq=seq, at=at(seq), event=event)
            for seq, event in enumerate(events, 1)]


def started() -> TurnStarted:
    return TurnStarted(agent="a1", wire="openai-compat", model="sim-vision-1",
                       endpoint_host="127.0.0.1", language="en", request="Look.", max_rounds=8,
                       image_cap=20, placement="alternate", summary_instruction="Answer now.")


def meta(digest: str, size: int) -> ImageMeta:
    return ImageMeta(digest=digest, source_format="PNG", media_type="image/jpeg",
                     path="re_encoded", width=640, height=480, size=size, source_size=size * 4)


def sent(round: int, digests: list[str], purpose: RequestPurpose = "round") -> RequestSent:
    return RequestSent(round=round, purpose=purpose, wire="openai-compat", model="sim-vision-1",
                       endpoint_host="127.0.0.1", message_count=4,
                       images=[ImageDelivery(digest=d, call_id="c1", placement="alternate")
                               for d in digests])


def delivery(digest: str, seq: int, round: int, outcome: Outcome, *, turn_stop: TurnStop,
             stripped: bool = False, purpose: RequestPurpose = "round", turn_id: str = "t1",
             tool: str = "cam__snap", image: int = 0) -> DeliveryRow:
    return DeliveryRow(digest=digest, turn_id=turn_id, request_seq=seq, image=image, at=at(seq),
                       round=round,
                       purpose=purpose, wire="openai-compat", model="sim-vision-1",
                       endpoint_host="127.0.0.1", placement="alternate", call_id="c1", tool=tool,
                       outcome=outcome, stripped=stripped, turn_stop=turn_stop)


T1: list[TurnEvent] = [
    started(),                                                                  # 1
    RoundStarted(round=1),                                                      # 2
    ToolCalled(round=1, call_id="c1", server="cam", name="cam__snap"),          # 3
    ImagesNormalized(round=1, call_id="c1", images=[meta(D1, 21017), meta(D2, 300)]),  # 4
    ToolResultRecorded(round=1, call_id="c1", name="cam__snap", ok=True, body="two",
                       image_digests=[D1, D2]),                                 # 5
    sent(2, [D1, D2]),                                                          # 6 received
    ResponseReceived(round=2, text="again"),                                    # 7
    sent(3, [D1, D2]),                                                          # 8 refused, stripped
    RequestRefused(round=3, status=400, message="image rejected", images_rejected=True),  # 9
    ImagesStripped(round=3, model="sim-vision-1", removed=2, digests=[D1, D2],
                   call_ids=["c1"]),                                            # 10
    sent(3, [], purpose="resend"),                                              # 11
    ResponseReceived(round=3, text="Green."),                                   # 12
    TurnEnded(rounds=3, stop="answered", answer="Green."),                      # 13
]


def test_origins_name_the_tool_server_and_normalization_of_each_image() -> None:
    assert audit_rows(envelopes("t1", T1)).origins == [
        OriginRow(digest=D1, turn_id="t1", seq=4, image=0, at=at(4), round=1, call_id="c1",
                  tool="cam__snap", server="cam", source_format="PNG", media_type="image/jpeg",
                  path="re_encoded", width=640, height=480, size=21017),
        OriginRow(digest=D2, turn_id="t1", seq=4, image=1, at=at(4), round=1, call_id="c1",
                  tool="cam__snap", server="cam", source_format="PNG", media_type="image/jpeg",
                  path="re_encoded", width=640, height=480, size=300),
    ]


def test_answered_requests_are_received_and_refused_then_stripped_ones_say_so() -> None:
    assert audit_rows(envelopes("t1", T1)).deliveries == [
        delivery(D1, 6, 2, "received", turn_stop="answered"),
        delivery(D2, 6, 2, "received", image=1, turn_stop="answered"),
        delivery(D1, 8, 3, "refused", stripped=True, turn_stop="answered"),
        delivery(D2, 8, 3, "refused", image=1, stripped=True, turn_stop="answered"),
    ]


def test_a_refusal_without_a_strip_is_refused_and_not_stripped() -> None:
    events: list[TurnEvent] = [*T1[:5], sent(2, [D1]),
              RequestRefused(round=2, status=413, message="too large"),
              sent(2, [D1], purpose="resend"),
              ResponseReceived(round=2, text="ok")]
    assert audit_rows(envelopes("t1", events)).deliveries == [
        delivery(D1, 6, 2, "refused", turn_stop="cut"),
        delivery(D1, 8, 2, "received", purpose="resend", turn_stop="cut"),
    ]


def test_a_strip_marks_only_the_last_refused_request() -> None:
    events: list[TurnEvent] = [*T1[:5],
              sent(2, [D1]), RequestRefused(round=2, status=400),                      # 6, 7
              sent(2, [D2], purpose="resend"), RequestRefused(round=2, status=400),    # 8, 9
              ImagesStripped(round=2, model="sim-vision-1", removed=1, digests=[D2])]   # 10
    assert [(r.request_seq, r.outcome, r.stripped)
            for r in audit_rows(envelopes("t1", events)).deliveries] == [
        (6, "refused", False), (8, "refused", True)]


def test_requests_without_an_answer_are_unanswered() -> None:
    events: list[TurnEvent] = [*T1[:5],
              sent(2, [D1]),                                                  # 6: superseded
              sent(2, [D1], purpose="resend"),                                # 7: retry gave up
              LlmRetryStopped(round=2, attempt=5, status=500, error_class="server_error"),
              TurnEnded(rounds=2, stop="error", error="gave up")]
    assert audit_rows(envelopes("t1", events)).deliveries == [
        delivery(D1, 6, 2, "unanswered", turn_stop="error"),
        delivery(D1, 7, 2, "unanswered", purpose="resend", turn_stop="error"),
    ]


def test_a_recording_that_stops_mid_request_leaves_it_unanswered() -> None:
    events: list[TurnEvent] = [*T1[:5], sent(2, [D1])]
    assert audit_rows(envelopes("t1", events)).deliveries == [
        delivery(D1, 6, 2, "unanswered", turn_stop="cut")]


def test_calls_and_turn_ends_apply_per_turn_and_unknown_calls_have_empty_names() -> None:
    other: list[TurnEvent] = [
        started(),
        ToolCalled(round=1, call_id="c1", server="eye", name="eye__look"),
        ImagesNormalized(round=1, call_id="c1", images=[meta(D3, 99)]),
        sent(2, [D3]),
        ResponseReceived(round=2, text="ok"),
        TurnEnded(rounds=1, stop="tool_limit", answer="ok"),
    ]
    orphan: list[TurnEvent] = [
        started(),
        ImagesNormalized(round=1, call_id="c1", images=[meta(D1, 21017)]),
        sent(2, [D1]),
    ]
    rows = audit_rows([*envelopes("t1", T1[:7]), *envelopes("t2", other),
                       *envelopes("t3", orphan)])
    assert [(o.turn_id, o.digest, o.tool, o.server) for o in rows.origins] == [
        ("t1", D1, "cam__snap", "cam"), ("t1", D2, "cam__snap", "cam"),
        ("t2", D3, "eye__look", "eye"), ("t3", D1, "", "")]
    assert rows.deliveries == [
        delivery(D1, 6, 2, "received", turn_stop="cut"),
        delivery(D2, 6, 2, "received", image=1, turn_stop="cut"),
        delivery(D3, 4, 2, "received", turn_id="t2", tool="eye__look", turn_stop="tool_limit"),
        delivery(D1, 3, 2, "unanswered", turn_id="t3", tool="", turn_stop="cut"),
    ]


def test_no_images_no_rows() -> None:
    events: list[TurnEvent] = [started(), sent(1, []), ResponseReceived(round=1, text="hi"),
              TurnEnded(rounds=0, stop="answered", answer="hi")]
    assert audit_rows(envelopes("t1", events)) == AuditRows(origins=[], deliveries=[])
