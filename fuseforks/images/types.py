"""Shared types for tool-result images.

A kept image lives in memory for one turn only; a dropped image carries only a reason and a short
human detail so instruments can say why without ever holding bytes.
"""

from __future__ import annotations

import msgspec

from fuseforks.core.names import DropReason, ImagePath


class NormalizedImage(msgspec.Struct, frozen=True):
    """An image ready to send: the exact bytes, their type, size and digest."""

    data: bytes  # bytes to send
    media_type: str  # "image/jpeg" | "image/webp" | "image/png"
    width: int
    height: int
    size: int  # len(data)
    digest: str  # sha256 hex of data
    path: ImagePath
    source_format: str  # detected input format, e.g. "JPEG", "PNG", "WEBP"
    source_size: int  # decoded input byte count
    frames: int = 1  # frames of an animation or pages of a TIFF in the source; the first is sent
    source_width: int = 0
    source_height: int = 0
    """The source's size as seen (EXIF orientation applied) before any scaling; 0: not known
    (an image served again from an older record)."""
    illegible: bool = False
    """Shrunk to fit a byte limit below the size its text needs to be read
    (`fuseforks.images.within_budget`)."""

    def __repr__(self) -> str:
        """Everything but the pixels: a repr can end up in a log or an assertion message."""
        return (
            f"NormalizedImage(data=<{len(self.data)} bytes>, media_type={self.media_type!r},"
            f" width={self.width}, height={self.height}, size={self.size},"
            f" digest={self.digest!r}, path={self.path!r},"
            f" source_format={self.source_format!r}, source_size={self.source_size},"
            f" frames={self.frames}, source_width={self.source_width},"
            f" source_height={self.source_height}, illegible={self.illegible})"
        )


class DroppedImage(msgspec.Struct, frozen=True):
    """An image that will not be sent, and why (never its bytes)."""

    reason: DropReason
    index: int  # position of the image among the result's image blocks (0-based)
    source_format: str | None  # detected format if any
    detail: str  # short human reason for instruments, never bytes


class ResultImages(msgspec.Struct, frozen=True):
    """The images of one tool result after normalization, in their original order."""

    kept: list[NormalizedImage]
    dropped: list[DroppedImage]


