"""`fuseforks image inspect`: what the model will get for an image, before any turn runs.

Point it at image files, at files holding the base64 text of an MCP image block, or at a saved MCP
tool result (a `CallToolResult` JSON, bare or inside a JSON-RPC response): each image is put through
the same `normalize_image` / per-result step the engine uses, and the decision is printed. The
server's `mimeType` is shown next to what the bytes really are, because that mismatch is what makes
providers answer 400.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import msgspec

from fuseforks.images.normalize import normalize_image, normalize_result_images
from fuseforks.images.probe import sniff_format
from fuseforks.images.types import DroppedImage, NormalizedImage

_BASE64_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n")
_OUT_FORMATS = {"image/jpeg": "JPEG", "image/webp": "WEBP"}


class Inspection(msgspec.Struct, omit_defaults=True):
    """One image's decision as printed by --json (never the image bytes)."""

    file: str
    outcome: str  # "kept" | "dropped"
    block: int | None = None  # position among the image blocks of a saved tool result
    claimed_media_type: str | None = None  # the server's mimeType, when the file carried one
    path: str | None = None
    source_format: str | None = None
    media_type: str | None = None
    source_size: int | None = None
    size: int | None = None
    width: int | None = None
    height: int | None = None
    digest: str | None = None
    reason: str | None = None
    detail: str | None = None


_encoder = msgspec.json.Encoder()


@click.group()
def image() -> None:
    """Look at images the way the engine will send them."""


@image.command()
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON array of decisions instead of lines."
)
def inspect(files: tuple[Path, ...], as_json: bool) -> None:
    """Print what normalize_image decides for each FILE (an image, base64 text, or a tool result)."""
    rows: list[Inspection] = []
    for file in files:
        rows.extend(_inspect_file(file))
    if as_json:
        click.echo(_encoder.encode(rows).decode())
        return
    for row in rows:
        click.echo(_line(row))


def _inspect_file(file: Path) -> list[Inspection]:
    raw = file.read_bytes()
    blocks = _tool_result_images(raw)
    if blocks is not None:
        outcomes = normalize_result_images([data for data, _ in blocks])
        by_index: dict[int, NormalizedImage | DroppedImage] = {d.index: d for d in outcomes.dropped}
        kept = iter(outcomes.kept)
        rows = []
        for index, (_, claimed) in enumerate(blocks):
            outcome = by_index.get(index) or next(kept)
            rows.append(_row(str(file), outcome, block=index, claimed=claimed))
        return rows
    stripped = raw.strip()
    if sniff_format(raw[:32]) is None and stripped and set(stripped) <= _BASE64_BYTES:
        return [_row(str(file), normalize_image(stripped.decode("ascii")))]
    return [_row(str(file), normalize_image(raw))]


def _tool_result_images(raw: bytes) -> list[tuple[str, str | None]] | None:
    """(base64 data, mimeType) of each image block if `raw` is a saved MCP tool result, else None."""
    if raw.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        document: Any = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    if isinstance(document, dict) and isinstance(document.get("result"), dict):
        document = document["result"]  # a JSON-RPC response
    content = document.get("content") if isinstance(document, dict) else document
    if not isinstance(content, list):
        return None
    images = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            data = block.get("data")
            mime = block.get("mimeType")
            images.append(
                (data if isinstance(data, str) else "", mime if isinstance(mime, str) else None)
            )
    return images


def _row(
    file: str,
    outcome: NormalizedImage | DroppedImage,
    *,
    block: int | None = None,
    claimed: str | None = None,
) -> Inspection:
    if isinstance(outcome, NormalizedImage):
        return Inspection(
            file=file,
            outcome="kept",
            block=block,
            claimed_media_type=claimed,
            path=outcome.path,
            source_format=outcome.source_format,
            media_type=outcome.media_type,
            source_size=outcome.source_size,
            size=outcome.size,
            width=outcome.width,
            height=outcome.height,
            digest=outcome.digest,
        )
    return Inspection(
        file=file,
        outcome="dropped",
        block=block,
        claimed_media_type=claimed,
        source_format=outcome.source_format,
        reason=outcome.reason,
        detail=outcome.detail,
    )


def _line(row: Inspection) -> str:
    label = row.file if row.block is None else f"{row.file}#{row.block}"
    claimed = f" claimed={row.claimed_media_type}" if row.claimed_media_type else ""
    if row.outcome == "kept":
        out_format = _OUT_FORMATS.get(row.media_type or "", row.media_type)
        return (
            f"{label}: {row.path}{claimed} format={row.source_format}->{out_format}"
            f" bytes={row.source_size}->{row.size} px={row.width}x{row.height}"
            f" sha256={row.digest}"
        )
    fmt = row.source_format or "-"
    return f"{label}: dropped{claimed} reason={row.reason} format={fmt} detail={row.detail!r}"
