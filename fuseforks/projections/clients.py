"""What the gateway did for each MCP client, over time: one read model for the console's pages.

A pure fold over gateway sessions' events. Each tool result the gateway sent back to a client
(`ResultSent`) counts its images by what became of them on the way:

- **passed**: the client got the server's own bytes (`ImageMeta.path` is `pass_through`);
- **re-encoded**: the client got new bytes at the source's pixel size (`re_encoded`);
- **shrunk**: the client got the image smaller than its source — scaled down to its long edge
  or shrunk until it fit its bytes (`fuseforks.projections.notes.scaled`, the rule of the note
  `sent at W×H` the client read);
- **dropped**: the client got a note instead — an image the pipeline dropped (`ImagesDropped`)
  or one the client's limit on a whole result left out (normalized, not sent).

and its bytes: those of the servers' images the gateway read (`source_size` of each image it
kept; a dropped image's size is not recorded) against those it sent on (`size` of each image the
client got). A session is counted where it started (`SessionStarted`). Everything is keyed by
the client's name as it gave it in `initialize`, every version together.

Times are the record's, in UTC; `timeline` puts them in buckets of an hour, or of a day when the
moments span more than `HOURLY_SPAN`, every bucket from the first to the last shown (an empty
one too, so the chart's axis is time).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

import msgspec

from fuseforks.events.codec import Envelope
from fuseforks.events.types import (
    ImageMeta,
    ImagesDropped,
    ImagesNormalized,
    ResultSent,
    SessionStarted,
)
from fuseforks.projections.audit import at_key
from fuseforks.projections.notes import scaled

KINDS = ("SessionStarted", "ImagesNormalized", "ImagesDropped", "ResultSent")
"""The kinds of event the fold reads (`Record.of_kinds`)."""
HOURLY_SPAN = timedelta(hours=48)
"""Moments spanning at most this long are shown by the hour, longer spans by the day."""

Fate = Literal["passed", "re_encoded", "shrunk"]
Unit = Literal["hour", "day"]


def fate(image: ImageMeta) -> Fate:
    """What the client got of a kept image."""
    if scaled(image):
        return "shrunk"
    return "passed" if image.path == "pass_through" else "re_encoded"


class Tally(msgspec.Struct, frozen=True, kw_only=True):
    """Counts for one client over some time: sessions, results and their images, and bytes."""

    sessions: int = 0
    results: int = 0
    """Tool results (and resources and prompts) sent back."""
    passed: int = 0
    re_encoded: int = 0
    shrunk: int = 0
    dropped: int = 0
    received_bytes: int = 0
    """Bytes of the servers' images the gateway kept, as the servers sent them."""
    sent_bytes: int = 0
    """Bytes of the images sent on to the client."""

    def __add__(self, other: Tally) -> Tally:
        return Tally(**{name: getattr(self, name) + getattr(other, name)
                        for name in Tally.__struct_fields__})

    @property
    def images(self) -> int:
        """Images the servers returned in the counted results."""
        return self.passed + self.re_encoded + self.shrunk + self.dropped


NOTHING = Tally()


IMAGE_SERIES = (("passed", "passed through"), ("re_encoded", "re-encoded"),
                ("shrunk", "shrunk"), ("dropped", "dropped"))
"""What became of a client's images, in the order every reader shows them (`Tally`'s fields and
their names)."""
BYTE_SERIES = (("received_bytes", "from servers"), ("sent_bytes", "sent to the client"))
"""A client's bytes, in the order every reader shows them."""


class ClientMoment(msgspec.Struct, frozen=True, kw_only=True):
    """One thing the gateway did for a client: a session begun, or one result sent."""

    client: str
    at: str
    """`at_key` of the event: UTC, to the millisecond."""
    session_id: str
    tally: Tally


def client_moments(history: Iterable[Envelope]) -> list[ClientMoment]:
    """Every session start and result sent of the given envelopes (every turn and session of a
    record, oldest first, or only the `KINDS`), in order. A turn's images are not a client's:
    only calls of a session whose start is among the envelopes are counted."""
    sessions: set[str] = set()
    kept: dict[tuple[str, str], list[ImageMeta]] = {}
    drops: dict[tuple[str, str], int] = {}
    moments: list[ClientMoment] = []
    for envelope in history:
        event, session = envelope.event, envelope.turn_id
        match event:
            case SessionStarted():
                sessions.add(session)
                client, moment = event.client, Tally(sessions=1)
            case ImagesNormalized() if session in sessions:
                kept[(session, event.call_id)] = list(event.images)
                continue
            case ImagesDropped() if session in sessions:
                drops[(session, event.call_id)] = len(event.drops)
                continue
            case ResultSent():
                client = event.client
                moment = _result(event, kept.pop((session, event.call_id), []),
                                 drops.pop((session, event.call_id), 0))
            case _:
                continue
        key = at_key(envelope.at)
        if key is not None:  # fuseforks writes none other; a hand-made line may
            moments.append(ClientMoment(client=client, at=key, session_id=session,
                                        tally=moment))
    return moments


def _result(sent: ResultSent, kept: Sequence[ImageMeta], dropped: int) -> Tally:
    by_digest = {image.digest: image for image in kept}
    images = [by_digest[digest] for digest in sent.images if digest in by_digest]
    fates = [fate(image) for image in images]
    left_out = len(kept) - len(images)  # by the client's limit on a whole result
    return Tally(results=1, passed=fates.count("passed"), re_encoded=fates.count("re_encoded"),
                 shrunk=fates.count("shrunk"), dropped=dropped + left_out,
                 received_bytes=sum(image.source_size for image in kept),
                 sent_bytes=sum(image.size for image in images))


def total(moments: Iterable[ClientMoment]) -> Tally:
    return sum((m.tally for m in moments), NOTHING)


def totals(moments: Iterable[ClientMoment]) -> dict[str, Tally]:
    """Each client's tally, by name in alphabetical order."""
    found: dict[str, Tally] = {}
    for moment in moments:
        found[moment.client] = found.get(moment.client, NOTHING) + moment.tally
    return dict(sorted(found.items()))


def between(moments: Iterable[ClientMoment], since: str | None,
            until: str | None) -> list[ClientMoment]:
    """The moments from `since` (inclusive) to `until` (exclusive), `since_key`s as the audit
    takes them."""
    return [m for m in moments
            if (since is None or m.at >= since) and (until is None or m.at < until)]


class Bucket(msgspec.Struct, frozen=True, kw_only=True):
    start: str
    """Its first moment, `YYYY-MM-DDTHH:00Z` (an hour) or `YYYY-MM-DD` (a day)."""
    tally: Tally


class Timeline(msgspec.Struct, frozen=True, kw_only=True):
    unit: Unit
    buckets: list[Bucket]


def timeline(moments: Sequence[ClientMoment]) -> Timeline:
    """The moments' tallies in buckets of an hour or a day (by their span), oldest first, every
    bucket from the first moment's to the last's; no bucket without moments."""
    if not moments:
        return Timeline(unit="hour", buckets=[])
    instants = [_instant(m.at) for m in moments]
    first, last = min(instants), max(instants)
    unit: Unit = "hour" if last - first <= HOURLY_SPAN else "day"
    step = timedelta(hours=1) if unit == "hour" else timedelta(days=1)
    start = _floor(first, unit)
    count = int((_floor(last, unit) - start) / step) + 1
    tallies = [NOTHING] * count
    for moment, instant in zip(moments, instants, strict=True):
        index = int((_floor(instant, unit) - start) / step)
        tallies[index] = tallies[index] + moment.tally
    return Timeline(unit=unit, buckets=[
        Bucket(start=_label(start + n * step, unit), tally=tally)
        for n, tally in enumerate(tallies)])


def _instant(key: str) -> datetime:
    return datetime.strptime(key, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def _floor(instant: datetime, unit: Unit) -> datetime:
    hour = instant.replace(minute=0, second=0, microsecond=0)
    return hour if unit == "hour" else hour.replace(hour=0)


def _label(instant: datetime, unit: Unit) -> str:
    return instant.strftime("%Y-%m-%dT%H:00Z" if unit == "hour" else "%Y-%m-%d")
