"""`client_moments`, `totals`, `timeline`: what the gateway did for each client, over time."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImageCut,
    ImageDrop,
    ImageMeta,
    ImagesCapped,
    ImagesDropped,
    ImagesNormalized,
    ResultSent,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    TurnEvent,
    TurnStarted,
)
from fuseforks.projections.clients import (
    ClientMoment,
    Tally,
    client_moments,
    timeline,
    total,
    totals,
)
from fuseforks.stores.jsonl import read_stream

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


def digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def image(name: str, *, path: str = "re_encoded", size: int, source_size: int,
          edge: int = 1000, source_edge: int = 1000) -> ImageMeta:
    return ImageMeta(digest=digest(name), source_format="PNG", media_type="image/jpeg",
                     path=path, width=edge, height=edge // 2, size=size,  # type: ignore[arg-type]
                     source_size=source_size, source_width=source_edge,
                     source_height=source_edge // 2)


def started(client: str) -> SessionStarted:
    return SessionStarted(agent="gateway", client=client, client_version="1.0",
                          transport="stdio", profile="claude-desktop", limits=ImageLimits(),
                          result_limits=ResultLimits(), language="en")


def sent(client: str, call_id: str, *names: str) -> ResultSent:
    return ResultSent(round=1, call_id=call_id, name="shots__both", server="shots",
                      client=client, images=[digest(n) for n in names])


def sealed(turn_id: str, start: datetime, events: list[TurnEvent]) -> list[Envelope]:
    return [Envelope(turn_id=turn_id, seq=n, version=4, event=event,
                     at=(start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z"))
            for n, event in enumerate(events, start=1)]


START = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
PASSED = image("small", path="pass_through", size=20_516, source_size=20_516)
RE_ENCODED = image("retina", size=589_690, source_size=4_293_476)
SHRUNK = image("screen", size=441_861, source_size=4_394_045, edge=3500, source_edge=3840)


def session(client: str = "claude-code") -> list[TurnEvent]:
    """Three calls: an image passed and one dropped; one re-encoded and one shrunk of which the
    result cap let only the first through; a result without images."""
    return [
        started(client),
        ToolCalled(round=1, call_id="c1", server="shots", name="shots__both"),
        ImagesNormalized(round=1, call_id="c1", images=[PASSED]),
        ImagesDropped(round=1, call_id="c1", name="shots__both",
                      drops=[ImageDrop(index=1, reason="too_many", source_format="PNG")]),
        ToolResultRecorded(round=1, call_id="c1", name="shots__both", ok=True, body="",
                           image_digests=[PASSED.digest]),
        sent(client, "c1", "small"),
        ToolCalled(round=2, call_id="c2", server="shots", name="shots__both"),
        ImagesNormalized(round=2, call_id="c2", images=[RE_ENCODED, SHRUNK]),
        ToolResultRecorded(round=2, call_id="c2", name="shots__both", ok=True, body="",
                           image_digests=[RE_ENCODED.digest, SHRUNK.digest]),
        ImagesCapped(round=2, removed=1, kept=1, removed_digests=[SHRUNK.digest],
                     cuts=[ImageCut(call_id="c2", keep=1, removed=1)]),
        sent(client, "c2", "retina"),
        ToolCalled(round=3, call_id="c3", server="shots", name="shots__nothing"),
        ToolResultRecorded(round=3, call_id="c3", name="shots__nothing", ok=False, body="no"),
        sent(client, "c3"),
        SessionEnded(calls=3, cause="closed"),
    ]


def test_each_result_counts_its_images_by_what_the_client_got() -> None:
    moments = client_moments(sealed("s1", START, session()))
    assert [(m.client, m.at, m.session_id, m.tally) for m in moments] == [
        ("claude-code", "2026-12-01T09:30:01.000Z", "s1", Tally(sessions=1)),
        ("claude-code", "2026-12-01T09:30:06.000Z", "s1",
         Tally(results=1, passed=1, dropped=1, received_bytes=20_516, sent_bytes=20_516)),
        ("claude-code", "2026-12-01T09:30:11.000Z", "s1",
         Tally(results=1, re_encoded=1, dropped=1, received_bytes=4_293_476 + 4_394_045,
               sent_bytes=589_690)),
        ("claude-code", "2026-12-01T09:30:14.000Z", "s1", Tally(results=1)),
    ]


def test_a_shrunk_image_is_one_sent_smaller_than_its_source() -> None:
    events = session()
    events[10] = sent("claude-code", "c2", "screen")  # the cap kept the other one
    (_, _, capped, _) = client_moments(sealed("s1", START, events))
    assert capped.tally == Tally(results=1, shrunk=1, dropped=1,
                                 received_bytes=4_293_476 + 4_394_045, sent_bytes=441_861)


def test_a_turns_images_are_no_clients() -> None:
    turn = sealed("t1", START, [
        TurnStarted(agent="a", wire="anthropic", model="m", endpoint_host="h", language="en",
                    request="r", max_rounds=4, image_cap=20, placement="native",
                    summary_instruction=""),
        ToolCalled(round=1, call_id="c1", server="shots", name="shots__both"),
        ImagesNormalized(round=1, call_id="c1", images=[PASSED]),
    ])
    assert client_moments(turn) == []


def test_totals_are_by_client_name_every_version_together() -> None:
    history = [*sealed("s1", START, session("cursor")),
               *sealed("s2", START + timedelta(days=1), session("claude-code")),
               *sealed("s3", START + timedelta(days=2), session("claude-code"))]
    one = Tally(sessions=1, results=3, passed=1, re_encoded=1, dropped=2,
                received_bytes=20_516 + 4_293_476 + 4_394_045, sent_bytes=20_516 + 589_690)
    assert totals(client_moments(history)) == {"claude-code": one + one, "cursor": one}
    assert one.images == 4


def test_the_recorded_session_of_claude_desktop() -> None:
    moments = client_moments(read_stream(REPLAYS / "gateway-claude-desktop.jsonl"))
    # recorded before the source's size was kept: the two screenshots count as re-encoded
    assert totals(moments) == {"claude-ai": Tally(
        sessions=1, results=3, passed=1, re_encoded=2, received_bytes=4_394_045 + 4_293_476
        + 20_516, sent_bytes=96_188 + 112_162 + 20_516)}
    assert [(b.start, b.tally.results) for b in timeline(moments).buckets] == [
        ("2026-11-30T00:00Z", 3)]


def moment(at: datetime, **counts: int) -> ClientMoment:
    return ClientMoment(client="c", at=at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                        session_id="s", tally=Tally(**counts))


def test_two_days_are_shown_by_the_hour_with_the_empty_hours() -> None:
    first = datetime(2026, 12, 1, 22, 59, 59, 999_000, tzinfo=UTC)
    shown = timeline([moment(first, passed=1), moment(first + timedelta(seconds=1), dropped=2),
                      moment(first + timedelta(hours=2), results=1)])
    assert shown.unit == "hour"
    assert [(b.start, b.tally) for b in shown.buckets] == [
        ("2026-12-01T22:00Z", Tally(passed=1)), ("2026-12-01T23:00Z", Tally(dropped=2)),
        ("2026-12-02T00:00Z", Tally(results=1))]
    at_most = timeline([moment(first), moment(first + timedelta(hours=48))])
    assert (at_most.unit, len(at_most.buckets)) == ("hour", 49)


def test_a_longer_span_is_shown_by_the_day() -> None:
    first = datetime(2026, 12, 30, 23, 0, tzinfo=UTC)
    shown = timeline([moment(first, shrunk=1),
                      moment(first + timedelta(hours=48, milliseconds=1), sent_bytes=5)])
    assert shown.unit == "day"
    assert [(b.start, b.tally) for b in shown.buckets] == [
        ("2026-12-30", Tally(shrunk=1)), ("2026-12-31", Tally()),
        ("2027-01-01", Tally(sent_bytes=5))]
    assert timeline([]).buckets == []


counts = st.integers(min_value=0, max_value=10**9)
tallies = st.builds(Tally, sessions=counts, results=counts, passed=counts, re_encoded=counts,
                    shrunk=counts, dropped=counts, received_bytes=counts, sent_bytes=counts)
instants = st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31),
                        timezones=st.just(UTC))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(instants, tallies), min_size=1, max_size=30))
def test_the_buckets_add_up_to_the_total(drawn: list[tuple[datetime, Tally]]) -> None:
    moments = [ClientMoment(client="c", at=moment(at).at, session_id="s", tally=tally)
               for at, tally in drawn]
    shown = timeline(moments)
    assert sum((b.tally for b in shown.buckets), Tally()) == total(moments)
    starts = [b.start for b in shown.buckets]
    assert starts == sorted(set(starts))
    ats = sorted(m.at for m in moments)
    assert ats[0].startswith(starts[0].removesuffix(":00Z"))  # the first hour or day
    assert ats[-1].startswith(starts[-1].removesuffix(":00Z"))  # the last
    span = datetime.fromisoformat(ats[-1]) - datetime.fromisoformat(ats[0])
    assert shown.unit == ("hour" if span <= timedelta(hours=48) else "day")
