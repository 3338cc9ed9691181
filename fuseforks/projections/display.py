"""What a person sees when opening a tool call: the body (or what the result shows a person, when
its content is annotated for one audience), then one line naming the images sent.

"(1 image: JPEG 21 KB)" — format and size of each image, never the pixels.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from fuseforks.core.media import format_name
from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ImageMeta, ImagesNormalized, ToolResultRecorded, TurnStarted


class ToolDisplay(msgspec.Struct, frozen=True, kw_only=True):
    round: int
    call_id: str
    name: str
    text: str


def display_text(body: str, images: list[ImageMeta], language: Language) -> str:
    line = texts(language).display_line(
        [(format_name(m.media_type), m.size) for m in images]
    )
    return f"{body}\n{line}" if line else body


def tool_displays(history: Iterable[Envelope]) -> list[ToolDisplay]:
    language: Language = "en"
    images: dict[str, list[ImageMeta]] = {}
    shown = []
    for envelope in history:
        event = envelope.event
        if isinstance(event, TurnStarted):
            language = event.language
        elif isinstance(event, ImagesNormalized):
            images[event.call_id] = list(event.images)
        elif isinstance(event, ToolResultRecorded):
            shown.append(ToolDisplay(
                round=event.round, call_id=event.call_id, name=event.name,
                text=display_text(event.shown if event.shown is not None else event.body,
                                  images.get(event.call_id, []), language)))
    return shown
