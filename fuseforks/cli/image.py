"""`fuseforks image inspect`: what the model will get for an image, before any turn runs.

Point it at image files, at files holding the base64 text of an MCP image block (line breaks and
spaces allowed), at files holding a `data:` URL (base64 or percent-encoded), or at a saved MCP
tool result (a `CallToolResult` JSON, bare or inside a JSON-RPC response): each image is put
through the same `normalize_image` / per-result step the engine uses, and the decision is printed.
The server's `mimeType` (or the `data:` URL's media type) is shown next to what the bytes really
are, because that mismatch is what makes providers answer 400. A tool result without image blocks
says so in one line (with the kinds of blocks it has), rather than printing nothing. A dropped
image says why: a cut file, for instance, says `truncated: 2,620 of 3,930 bytes`.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import click
import msgspec

from fuseforks.core.media import ENGINE_LIMITS, format_name
from fuseforks.core.signatures import sniff_format
from fuseforks.images.normalize import normalize_image, normalize_result_images
from fuseforks.images.types import DroppedImage, NormalizedImage

_BASE64_BYTES = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n\t "
)
_DATA_URL = re.compile(rb"\s*data:([^,;]*)((?:;[^,;]*)*),(.*?)\s*", re.DOTALL | re.IGNORECASE)


class Inspection(msgspec.Struct, omit_defaults=True):
    """One image's decision as printed by --json (never the image bytes)."""

    file: str
    outcome: str  # "kept" | "dropped" | "no_images" (a tool result without image blocks)
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
    for file in files:
        if not file.is_file():  # a FIFO would be read for ever; a device is not an image file
            raise click.BadParameter(f"{file} is {_kind(file)}, not a file",
                                     param_hint="'FILES...'")
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
    result = _tool_result(raw)
    if result is not None:
        blocks, kinds = result
        if not blocks:
            listed = ", ".join(kinds) if kinds else "none"
            detail = f"the tool result has no image blocks ({len(kinds)} blocks: {listed})"
            return [Inspection(file=str(file), outcome="no_images", detail=detail)]
        outcomes = normalize_result_images([data for data, _ in blocks], ENGINE_LIMITS)
        by_index: dict[int, NormalizedImage | DroppedImage] = {d.index: d for d in outcomes.dropped}
        kept = iter(outcomes.kept)
        rows = []
        for index, (_, claimed) in enumerate(blocks):
            outcome = by_index.get(index) or next(kept)
            rows.append(_row(str(file), outcome, block=index, claimed=claimed))
        return rows
    data_url = _DATA_URL.fullmatch(raw)
    if data_url is not None:
        media_type = data_url.group(1).decode("ascii", "replace").strip() or None
        parameters = data_url.group(2).decode("ascii", "replace").lower().split(";")
        payload = data_url.group(3)
        if "base64" in (p.strip() for p in parameters):
            block: str | bytes = payload.decode("ascii", "replace")
        else:
            block = unquote_to_bytes(payload)
        return [_row(str(file), normalize_image(block), claimed=media_type)]
    stripped = raw.strip()
    if sniff_format(raw[:32]) is None and stripped and set(stripped) <= _BASE64_BYTES:
        decided = normalize_image(stripped.decode("ascii"))
        if isinstance(decided, DroppedImage) and decided.detail == "broken base64":
            decided = msgspec.structs.replace(decided, detail=NOT_BASE64_TEXT)
        return [_row(str(file), decided)]
    return [_row(str(file), normalize_image(raw))]


NOT_BASE64_TEXT = "text that is not an image, nor valid base64 of one"


def _kind(path: Path) -> str:
    mode = path.stat().st_mode
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def _tool_result(raw: bytes) -> tuple[list[tuple[str, str | None]], list[str]] | None:
    """For a saved MCP tool result: (base64 data, mimeType) of each image block, and the type of
    every block in order. None when `raw` is not a tool result."""
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
    kinds = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        kinds.append(kind if isinstance(kind, str) else "?")
        if isinstance(block, dict) and kind == "image":
            data = block.get("data")
            mime = block.get("mimeType")
            images.append(
                (data if isinstance(data, str) else "", mime if isinstance(mime, str) else None)
            )
    return images, kinds


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
    if row.outcome == "no_images":
        return f"{row.file}: no images: {row.detail}"
    label = row.file if row.block is None else f"{row.file}#{row.block}"
    claimed = f" claimed={row.claimed_media_type}" if row.claimed_media_type else ""
    if row.outcome == "kept":
        out_format = format_name(row.media_type or "")
        return (
            f"{label}: {row.path}{claimed} format={row.source_format}->{out_format}"
            f" bytes={row.source_size}->{row.size} px={row.width}x{row.height}"
            f" sha256={row.digest}"
        )
    fmt = row.source_format or "-"
    return f"{label}: dropped{claimed} reason={row.reason} format={fmt} detail={row.detail!r}"
