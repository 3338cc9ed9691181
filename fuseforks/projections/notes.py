"""The notes a tool result's text carries about its images, in the village language.

Why an image was not sent, that an image is the first frame (or page) of several, that it was
sent smaller than its source (with both sizes and the factor, so that a position named on the
picture maps back to the source's pixels): one function for every reader. The plan of an MCP
result writes them into what a model or a client reads, and a gateway session's fold derives them
again from the record — from the same values, so the two cannot drift.

Images are numbered by their place among the result's images (`index`, 0-based; the notes say
1-based): a kept image's place is the first one no drop took, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fuseforks.core.names import DropReason, Language
from fuseforks.core.texts import texts
from fuseforks.images.formats import PAGED_FORMATS


class KeptImage(Protocol):
    """What a note needs of a kept image: a normalized one, or its record (`ImageMeta`)."""

    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def source_width(self) -> int: ...
    @property
    def source_height(self) -> int: ...
    @property
    def frames(self) -> int: ...
    @property
    def source_format(self) -> str: ...
    @property
    def illegible(self) -> bool: ...


class Drop(Protocol):
    """What a note needs of a dropped image: a `DroppedImage`, or its record (`ImageDrop`)."""

    @property
    def index(self) -> int: ...
    @property
    def reason(self) -> DropReason: ...


def kept_places(kept: int, drops: Sequence[Drop]) -> list[int]:
    """The place among a result's images of each of its `kept` images, in order."""
    taken = {drop.index for drop in drops}
    places: list[int] = []
    place = 0
    while len(places) < kept:
        if place not in taken:
            places.append(place)
        place += 1
    return places


def image_notes(language: Language, max_images: int, kept: Sequence[KeptImage],
                drops: Sequence[Drop]) -> list[str]:
    """The notes of one result, image by image in their order: why one was not sent; that one
    is the first frame or page of several; that one was sent smaller than its source."""
    t = texts(language)
    by_place: dict[int, list[str]] = {
        drop.index: [t.dropped_note(drop.reason, drop.index, max_images)] for drop in drops}
    for place, image in zip(kept_places(len(kept), drops), kept, strict=True):
        notes = by_place.setdefault(place, [])
        if image.frames > 1:
            paged = image.source_format in PAGED_FORMATS
            notes.append(t.first_frame_note(place, image.frames, paged=paged))
        if scaled(image):
            notes.append(t.scaled_note(place, (image.source_width, image.source_height),
                                       (image.width, image.height)))
        if image.illegible:
            notes.append(t.illegible_note(place))
    return [note for place in sorted(by_place) for note in by_place[place]]


def scaled(image: KeptImage) -> bool:
    """The image was sent smaller than its source (the note says both sizes): scaled down to
    the long edge, or shrunk until it fit its byte limit. An image recorded before the source's
    size was kept says nothing of it: not scaled."""
    return bool(image.source_width) and (image.width, image.height) != (
        image.source_width, image.source_height)
