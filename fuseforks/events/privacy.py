"""The last guard before an event is sealed: no pixels, no base64, ever.

The types already forbid bytes; this catches image data smuggled into text — a base64 run (which is
how MCP carries images) or the base64 form of an image signature. It scans the event's JSON, so it
sees every string field at once.
"""

from __future__ import annotations

import re

from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import encode_event
from fuseforks.events.types import TurnEvent

BASE64_RUN_LIMIT = 200
_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{%d,}" % BASE64_RUN_LIMIT)
# JPEG, PNG, WebP (RIFF), GIF signatures as they begin a base64 text.
_IMAGE_SIGNATURE = re.compile(rb"(?:/9j/|iVBORw0KGgo|UklGR|R0lGOD)[A-Za-z0-9+/]{40}")


class PixelLeakError(FuseforksError):
    """An event would have carried image data or base64 into the store or the log."""


def find_pixel_leak(body: bytes) -> str | None:
    run = _BASE64_RUN.search(body)
    if run is not None:
        return f"a base64 run of {len(run.group())}+ characters"
    signature = _IMAGE_SIGNATURE.search(body)
    if signature is not None:
        return "the base64 signature of an image"
    return None


def assert_no_pixels(event: TurnEvent) -> None:
    leak = find_pixel_leak(encode_event(event))
    if leak is not None:
        raise PixelLeakError(f"refusing to record {type(event).__name__}: it holds {leak}")


def elide_base64(text: str) -> str:
    """Replace each base64 run in text the model would read with a short marker.

    A text block full of base64 is a server sending an image the wrong way; the model cannot read it
    and the store must not keep it.
    """
    return re.sub(
        rf"[A-Za-z0-9+/]{{{BASE64_RUN_LIMIT},}}={{0,2}}",
        lambda m: f"[base64 omitted: {len(m.group())} characters]",
        text,
    )
