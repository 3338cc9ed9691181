"""The tool port: the tools a turn offers, and one call's output as the turn layer takes it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from fuseforks.core.names import Language, ReadOutcome
from fuseforks.core.texts import texts
from fuseforks.events.types import ToolSpecRecord
from fuseforks.images.types import DroppedImage, NormalizedImage


class LinkRead(msgspec.Struct, frozen=True, kw_only=True):
    """One linked resource the tool layer read for a result: never its bytes."""

    uri: str
    outcome: ReadOutcome
    digest: str | None = None
    size: int = 0
    detail: str = ""


class ToolOutput(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call's output: text for the model, images to send, drops to report."""

    text: str  # what the model reads
    images: list[NormalizedImage] = []  # what will be sent, at most four
    dropped: list[DroppedImage] = []  # for instruments only; the model learns of them from `text`
    is_error: bool = False
    fault: str | None = None  # one-line reason when no result came from the server
    image_offsets: list[int] = []
    """Per kept image, in order: where in `text` it sat among the server's blocks (a character
    offset; 0 before all text). The wires whose format can interleave put each image back there."""
    shown: str | None = None
    """What a person is shown when it differs from `text` (content annotated for one audience)."""
    reads: list[LinkRead] = []
    """The resources the result linked to that were read (`resources/read`), in order."""
    bytes_without_images: int = 0
    """The gateway's result as sent to its client, every image's data left out (JSON bytes);
    0 where nothing limits a whole result (a turn)."""


def error_text(body: str, language: Language) -> str:
    """`body` behind the village language's "the tool returned an error" prefix."""
    prefix = texts(language).tool_error_prefix()
    separator = "" if prefix.endswith("：") else " "
    return f"{prefix}{separator}{body}"


def fault_output(reason: str, language: Language) -> ToolOutput:
    """A tool error for a call that produced no result (crash, timeout, unknown tool, ...)."""
    return ToolOutput(text=error_text(reason, language), is_error=True, fault=reason)


class ToolPort(Protocol):
    def tool_specs(self) -> Sequence[ToolSpecRecord]: ...

    def server_of(self, name: str) -> str: ...

    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        """Every failure is a tool-error output, never an exception."""
