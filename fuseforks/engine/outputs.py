"""The events that record one tool output, and the output they record — shared by a turn and a
gateway session, live and in replay.

A tool's output is recorded the same way wherever it was called: the linked resources the
engine read for it (`ResourceRead`), what normalization kept
(`ImagesNormalized`), what it dropped and why (`ImagesDropped`), and the output as text with
the digests of its images (`ToolResultRecorded`). Text that holds media is recorded with the
media cut out, and the image offsets of such a text are left out (they pointed into the text
as the server sent it).
"""

from __future__ import annotations

from typing import Any

import msgspec

from fuseforks.events.privacy import elide_base64
from fuseforks.events.types import (
    ImageDrop,
    ImageMeta,
    ImagesDropped,
    ImagesNormalized,
    ResourceRead,
    ToolResultRecorded,
    TurnEvent,
)
from fuseforks.images.types import DroppedImage, NormalizedImage
from fuseforks.ports.tools import LinkRead, ToolOutput

_canonical = msgspec.json.Encoder(order="sorted")


def recorded_arguments(arguments: dict[str, Any]) -> str:
    """Tool arguments as recorded: canonical JSON (sorted keys), media cut out."""
    return elide_base64(_canonical.encode(arguments).decode())


def image_meta(image: NormalizedImage) -> ImageMeta:
    return ImageMeta(digest=image.digest, source_format=image.source_format,
                     media_type=image.media_type, path=image.path, width=image.width,
                     height=image.height, size=image.size, source_size=image.source_size,
                     source_width=image.source_width, source_height=image.source_height,
                     frames=image.frames, illegible=image.illegible)


def output_events(round_: int, call_id: str, name: str, output: ToolOutput, *,
                  attached: bool) -> list[TurnEvent]:
    """The events of one tool output, in the order they are recorded. `attached`: its images go
    on (the turn attaches them to the message list; the gateway hands them to its client)."""
    events: list[TurnEvent] = [
        ResourceRead(round=round_, call_id=call_id, uri=elide_base64(read.uri),
                     outcome=read.outcome, digest=read.digest, size=read.size,
                     detail=elide_base64(read.detail))
        for read in output.reads
    ]
    if output.images:
        events.append(ImagesNormalized(round=round_, call_id=call_id,
                                       images=[image_meta(i) for i in output.images]))
    if output.dropped:
        events.append(ImagesDropped(round=round_, call_id=call_id, name=name, drops=[
            ImageDrop(index=d.index, reason=d.reason, source_format=d.source_format,
                      detail=d.detail)
            for d in output.dropped
        ]))
    body = elide_base64(output.text)
    offsets = output.image_offsets if body == output.text else []
    events.append(ToolResultRecorded(
        round=round_, call_id=call_id, name=name, ok=not output.is_error,
        body=body, image_digests=[i.digest for i in output.images],
        attached=attached or not output.images, fault=output.fault,
        image_offsets=list(offsets) if output.images else [],
        shown=elide_base64(output.shown) if output.shown is not None else None,
        bytes_without_images=output.bytes_without_images,
    ))
    return events


def recorded_output(result: ToolResultRecorded, normalized: ImagesNormalized | None,
                    dropped: ImagesDropped | None, reads: list[LinkRead] | None = None) -> ToolOutput:
    """The tool output a record holds, served again in replay: the recorded body, the recorded
    normalization results and linked-resource reads, with no image bytes."""
    images = [
        NormalizedImage(data=b"", media_type=m.media_type, width=m.width, height=m.height,
                        size=m.size, digest=m.digest, path=m.path,
                        source_format=m.source_format, source_size=m.source_size,
                        frames=m.frames, source_width=m.source_width,
                        source_height=m.source_height, illegible=m.illegible)
        for m in (normalized.images if normalized else [])
    ]
    drops = [DroppedImage(reason=d.reason, index=d.index, source_format=d.source_format,
                          detail=d.detail) for d in (dropped.drops if dropped else [])]
    return ToolOutput(text=result.body, images=images, dropped=drops,
                      is_error=not result.ok, fault=result.fault,
                      image_offsets=list(result.image_offsets), shown=result.shown,
                      reads=list(reads or []), bytes_without_images=result.bytes_without_images)
