"""Tool-result image normalization: what the model will get for each MCP image block.

Pure and synchronous at its core (`normalize_image`), with a per-result step that keeps at most four
images in order, and an async variant that runs the per-image work in worker threads (Pillow and
hashlib release the GIL) so a result with four large images does not block the event loop. A
small image whose header decides its outcome (a pass-through, a refusal) is judged on the loop:
that takes less than handing it to a thread (`ON_LOOP_MAX`).

The decision, cheapest checks first, so hostile input is rejected before it costs anything:
1. size of the input (base64 length tells the decoded size) against a 64 MiB cap -> `too_large`;
2. base64 decode, strict -> `unreadable` when broken;
3. format from the magic number, never from mimeType -> `unreadable` / `unsupported_format`;
4. the header's declared edge against 16,384 px, and the pixels its decoder would produce against
   the decode budget (50 MP; 25 MP for WebP and AVIF; a JPEG counts at its reduced decoding
   scale) -> `too_large` without decoding;
5. JPEG or still WebP within 1568 px and 2 MiB, a small plain PNG, whole -> the same bytes
   (`pass_through`, `fuseforks.images.encoding_choice.passes_through`);
6. otherwise decode and re-encode (`re_encoded`): lossless WebP for a graphic, JPEG q85 for a
   photo (`fuseforks.images.encoding_choice.encode_for_model`), `too_large` if still over 2 MiB.

The numbers of steps 5 and 6 and the four images per result are an `ImageLimits`: the engine's,
or a gateway client's. Every function here requires them, so the engine's own can never apply
silently where a client's were meant; only `normalize_image`, the library's one-image entry,
defaults to the engine's.
"""

from __future__ import annotations

import binascii
import hashlib
import math
from collections.abc import Sequence

import anyio
import anyio.to_thread
from PIL import Image

from fuseforks.core.media import (
    DECODE_MAX_EDGE_PX,
    ENGINE_LIMITS,
    INPUT_MAX_BYTES,
    MEDIA_TYPES,
    ImageLimits,
    format_name,
)
from fuseforks.core.names import DropReason
from fuseforks.core.signatures import sniff_format
from fuseforks.images.encoding_choice import passes_through
from fuseforks.images.formats import CARRIED_FORMATS, HEADER_WALKED
from fuseforks.images.probe import Header, ProbeError, ico_entry_sizes, probe, truncation
from fuseforks.images.reencode import DeclaredTooLarge, over_decode_budget, reencode
from fuseforks.images.types import DroppedImage, NormalizedImage, ResultImages

__all__ = ["CARRIED_FORMATS", "normalize_image", "normalize_result_images",
           "normalize_result_images_async"]
_DROP_WHITESPACE = str.maketrans("", "", " \t\r\n\v\f")
_BASE64_SLICE = 1024 * 1024  # characters; a multiple of 4

ImageBlock = str | bytes
Outcome = NormalizedImage | DroppedImage


def normalize_image(data: str | bytes,
                    limits: ImageLimits = ENGINE_LIMITS) -> NormalizedImage | DroppedImage:
    """Decide what the model gets for one MCP image block (base64 text, or raw bytes).

    Never raises for any input: every failure is a `DroppedImage` with a reason and a short detail
    that never contains the image's bytes.
    """
    return _normalize(data, 0, limits)


def normalize_result_images(blocks: Sequence[ImageBlock], limits: ImageLimits) -> ResultImages:
    """The images of one tool result: up to four kept in order, later ones `too_many`.

    An image dropped for another reason does not use up one of the four places, so the next block
    is tried; once four are kept, the rest are dropped without being decoded.
    """
    outcomes: dict[int, Outcome] = {}
    kept = 0
    for index, block in enumerate(blocks):
        if kept >= limits.max_images:
            outcomes[index] = _too_many(block, index, limits)
            continue
        outcome = _normalize(block, index, limits)
        outcomes[index] = outcome
        kept += isinstance(outcome, NormalizedImage)
    return _collect(outcomes, len(blocks))


async def normalize_result_images_async(blocks: Sequence[ImageBlock],
                                        limits: ImageLimits) -> ResultImages:
    """`normalize_result_images` with the per-image work in worker threads, concurrently.

    Runs in waves: as many blocks as there are free places among the four are normalized at
    once; a wave that drops some opens places for the next blocks. The result is the same as the
    synchronous version for every input, whatever order the threads finish in.
    """
    outcomes: dict[int, Outcome] = {}
    kept = 0
    cursor = 0
    while cursor < len(blocks) and kept < limits.max_images:
        wave = range(cursor, min(len(blocks), cursor + limits.max_images - kept))
        results: dict[int, Outcome] = {}
        pending: dict[int, ImageBlock] = {}
        for index in wave:
            looked = _from_header(blocks[index], index, limits)
            if isinstance(looked, NormalizedImage | DroppedImage):
                results[index] = looked
            else:  # its bytes, when the look decoded them: base64 is decoded once
                pending[index] = blocks[index] if looked is None else looked
        if pending:
            async with anyio.create_task_group() as group:
                for index, block in pending.items():
                    group.start_soon(_normalize_in_thread, block, index, limits, results)
        outcomes.update(results)
        kept += sum(isinstance(results[i], NormalizedImage) for i in wave)
        cursor = wave.stop
    for index in range(cursor, len(blocks)):
        outcomes[index] = _too_many(blocks[index], index, limits)
    return _collect(outcomes, len(blocks))


async def _normalize_in_thread(block: ImageBlock, index: int, limits: ImageLimits,
                               into: dict[int, Outcome]) -> None:
    into[index] = await anyio.to_thread.run_sync(_normalize, block, index, limits)


ON_LOOP_MAX = 256 * 1024
"""A block at most this long (base64 characters, or bytes) is first looked at on the event loop,
without decoding a pixel: its header decides most outcomes — a pass-through, a refusal — in tens
of microseconds (a camera's 7 KB frame: 40 µs), less than handing it to a worker thread and
waking the loop again. Only what needs its pixels decoded and encoded again goes to a thread."""


def _from_header(block: ImageBlock, index: int,
                 limits: ImageLimits) -> Outcome | bytes | None:
    """The outcome of a small block when no pixel must be decoded for it; else its bytes (for
    the thread that decodes its pixels), or None for a block too large to look at here."""
    if len(block) > ON_LOOP_MAX:
        return None
    return _judged(block, index, limits, decode=False)


def _collect(outcomes: dict[int, Outcome], count: int) -> ResultImages:
    ordered = [outcomes[i] for i in range(count)]
    return ResultImages(
        kept=[o for o in ordered if isinstance(o, NormalizedImage)],
        dropped=[o for o in ordered if isinstance(o, DroppedImage)],
    )


def size_text(size: int) -> str:
    """A byte limit as a detail names it: `2 MiB`, `750 KiB`, or a count of bytes."""
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)} MiB"
    if size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size:,} bytes"


def _too_many(block: ImageBlock, index: int, limits: ImageLimits) -> DroppedImage:
    """Dropped for its position; the format is sniffed from the first bytes only, for instruments."""
    head: bytes
    if isinstance(block, str):
        try:
            head = binascii.a2b_base64(block[:24].strip(), strict_mode=True)
        except (ValueError, binascii.Error):
            head = b""
    else:
        head = bytes(block[:18])
    detail = f"more than {limits.max_images} images in one result"
    return DroppedImage("too_many", index, sniff_format(head), detail)


def _drop(reason: DropReason, index: int, fmt: str | None, detail: str) -> DroppedImage:
    return DroppedImage(reason=reason, index=index, source_format=fmt, detail=detail)


def _decode_base64(text: str) -> bytes:
    """Strict base64 (RFC 4648 alphabet and padding); line breaks are tolerated, nothing else."""
    try:
        return _a2b_in_slices(text)
    except (binascii.Error, ValueError):
        compact = text.translate(_DROP_WHITESPACE)
        if compact == text:
            raise
        return _a2b_in_slices(compact)


def _a2b_in_slices(text: str) -> bytes:
    """Decode in 1 MiB slices: binascii holds the GIL, and one call on a large image would stall
    the event loop and the other workers for tens of milliseconds. Slices are whole 4-character
    groups, so strict mode still rejects padding anywhere but at the very end."""
    if len(text) <= _BASE64_SLICE:
        return binascii.a2b_base64(text, strict_mode=True)
    parts = []
    for start in range(0, len(text), _BASE64_SLICE):
        piece = text[start : start + _BASE64_SLICE]
        if piece.endswith("=") and start + _BASE64_SLICE < len(text):
            raise binascii.Error("padding before the end")
        parts.append(binascii.a2b_base64(piece, strict_mode=True))
    return b"".join(parts)


def _normalize(data: ImageBlock, index: int, limits: ImageLimits) -> Outcome:
    outcome = _judged(data, index, limits, decode=True)
    assert not isinstance(outcome, bytes)  # with the decoder at hand, every block has an outcome
    return outcome


def _judged(data: ImageBlock, index: int, limits: ImageLimits, *,
            decode: bool) -> Outcome | bytes:
    """`decode=False`: the image's bytes where its pixels would be decoded (a re-encode, or the
    decoder's own judgement of a header ours could not walk)."""
    try:
        return _decide(data, index, limits, decode)
    except Exception as error:  # the contract is "never raises", whatever the input
        name = type(error).__name__
        return _drop("unreadable", index, None, f"unexpected {name} while reading the image")


def _decide(data: ImageBlock, index: int, limits: ImageLimits, decode: bool = True,
            ) -> Outcome | bytes:
    if isinstance(data, str):
        # 4 base64 characters carry 3 bytes: the decoded size is known before decoding.
        if len(data) // 4 * 3 - data[-2:].count("=") > INPUT_MAX_BYTES:
            detail = f"base64 input over the input cap of {INPUT_MAX_BYTES:,} bytes"
            return _drop("too_large", index, None, detail)
        try:
            raw = _decode_base64(data)
        except (binascii.Error, ValueError):
            return _drop("unreadable", index, None, "broken base64")
    else:
        raw = bytes(data)
    if len(raw) > INPUT_MAX_BYTES:
        detail = f"input over the input cap of {INPUT_MAX_BYTES:,} bytes"
        return _drop("too_large", index, None, detail)

    fmt = sniff_format(raw[:32])
    if fmt is None:
        return _drop("unreadable", index, None, "bytes of no known image format")
    if fmt not in CARRIED_FORMATS:
        return _drop("unsupported_format", index, fmt, f"{fmt} is not carried")
    if fmt == "ICO":
        try:
            sizes = ico_entry_sizes(raw)
        except ProbeError as error:
            return _drop("unreadable", index, fmt, str(error))
        refused = next(filter(None, (_over_limits(fmt, w, h, limits.edge_for(w, h)) for w, h in sizes)), None)
        if refused is not None:
            return _drop("too_large", index, fmt, refused)
    if fmt not in HEADER_WALKED:
        # the decoder's header is checked before it decodes
        return _reencoded(raw, fmt, index, limits) if decode else raw
    try:
        header = probe(raw, fmt)
    except ProbeError as error:
        # Our header walk is strict; libjpeg and libwebp forgive some damage (stray bytes between
        # segments). Let the decoder judge: it re-checks the edge limit before decoding and
        # refuses a cut file, so nothing broken goes out and nothing readable is lost.
        return _reencoded(raw, fmt, index, limits, if_unreadable=str(error)) if decode else raw
    if min(header.width, header.height) < 1:
        return _drop("unreadable", index, fmt, "declares a zero dimension")
    refused = _over_limits(fmt, header.width, header.height,
                           limits.edge_for(header.width, header.height))
    if refused is not None:
        return _drop("too_large", index, fmt, refused)
    if passes_through(header, len(raw), limits):
        return _passed_through(raw, header)
    return _reencoded(raw, fmt, index, limits) if decode else raw


def _over_limits(fmt: str, width: int, height: int, max_edge: int) -> str | None:
    """Why an image declaring `width` x `height` is refused before decoding, or None."""
    if max(width, height) > DECODE_MAX_EDGE_PX:
        return f"declares {width}x{height} px, over {DECODE_MAX_EDGE_PX} px"
    return over_decode_budget(fmt, width, height, max_edge)


def _passed_through(raw: bytes, header: Header) -> NormalizedImage:
    return NormalizedImage(
        data=raw,
        media_type=MEDIA_TYPES[header.format],
        width=header.width,
        height=header.height,
        size=len(raw),
        digest=hashlib.sha256(raw).hexdigest(),
        path="pass_through",
        source_format=header.format,
        source_size=len(raw),
        source_width=header.width,
        source_height=header.height,
    )


def _unreadable_detail(
    raw: bytes, fmt: str, error: Exception, header_fault: str | None
) -> str:
    """Why the decoder refused: a cut file says how it is cut (from its own structure); else the
    header walk's objection; else the decoder's own first line, short (never image bytes)."""
    cut = truncation(raw, fmt)
    if cut is not None:
        return cut
    if header_fault is not None:
        return header_fault
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if "truncated" in message:  # cut where the structure cannot show it (between two IDATs)
        return "truncated: the decoder ran out of data"
    return f"cannot decode: {type(error).__name__}"


def _reencoded(raw: bytes, fmt: str, index: int, limits: ImageLimits,
               if_unreadable: str | None = None) -> Outcome:
    try:
        encoded = reencode(raw, fmt, limits)
    except DeclaredTooLarge as error:
        return _drop("too_large", index, fmt, str(error))
    except Image.DecompressionBombError:
        return _drop("too_large", index, fmt, "refused by the decompression-bomb guard")
    except MemoryError:
        return _drop("too_large", index, fmt, "out of memory while decoding")
    except Exception as error:  # Pillow raises many types for broken files
        return _drop("unreadable", index, fmt, _unreadable_detail(raw, fmt, error, if_unreadable))
    if len(encoded.data) > limits.max_bytes:
        kib = math.ceil(len(encoded.data) / 1024)
        limit = size_text(limits.max_bytes)
        return _drop("too_large", index, fmt, f"re-encoded {format_name(encoded.media_type)} is {kib} KiB, over {limit}")
    return NormalizedImage(
        data=encoded.data,
        media_type=encoded.media_type,
        width=encoded.width,
        height=encoded.height,
        size=len(encoded.data),
        digest=hashlib.sha256(encoded.data).hexdigest(),
        path="re_encoded",
        source_format=fmt,
        source_size=len(raw),
        frames=encoded.frames,
        source_width=encoded.source_width,
        source_height=encoded.source_height,
        illegible=encoded.illegible,
    )
