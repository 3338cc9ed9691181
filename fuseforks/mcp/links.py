"""Following a tool result's resource links: read what the model could not, within a budget.

A `resource_link` names a resource instead of carrying it. When the link is to an image or to
text and the tool's server serves resources, the hub reads it (`resources/read`) within
`LINK_READ_SECONDS` and `LINK_READ_MAX_BYTES`, and what it read joins the result right after the
link as embedded resources — so an image goes through the image pipeline and text reads like an
embedded text resource. Each read is reported (`LinkRead`: URI, SHA-256 of the bytes read, how it
ended) for the engine to record, never the bytes; a read that failed leaves a note in the village
language. A link to anything else, or on a server without resources, is left a link (its label
says so).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Awaitable, Callable, Sequence

import anyio
from mcp.types import (
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.mcp.blobs import blob_kind
from fuseforks.ports.tools import LinkRead

LINK_READ_SECONDS = 10.0
"""Time one linked resource may take to read."""
LINK_READ_MAX_BYTES = 16 * 1024 * 1024
"""Bytes one linked resource may hold (text as UTF-8, blobs decoded)."""
MAX_LINKS_READ = 4
"""Links read per result: a result listing a folder of links is not a download."""

ReadResource = Callable[[str], Awaitable[ReadResourceResult]]


def followed(link: ResourceLink) -> bool:
    """A link to an image or to text, by its declared type."""
    return blob_kind("", link.mime_type) in ("image", "text")


def _bytes(contents: TextResourceContents | BlobResourceContents) -> bytes:
    if isinstance(contents, TextResourceContents):
        return contents.text.encode()
    return base64.b64decode(contents.blob, validate=True)


async def read_links(content: Sequence[ContentBlock], read: ReadResource | None,
                     language: Language, *, seconds: float = LINK_READ_SECONDS,
                     max_bytes: int = LINK_READ_MAX_BYTES,
                     ) -> tuple[list[ContentBlock], list[LinkRead]]:
    """`content` with what each followed link holds right after it, and the reads."""
    if read is None:
        return list(content), []
    blocks: list[ContentBlock] = []
    reads: list[LinkRead] = []
    for block in content:
        blocks.append(block)
        if not isinstance(block, ResourceLink) or not followed(block):
            continue
        if len(reads) >= MAX_LINKS_READ:
            continue
        uri = str(block.uri)
        outcome, added = await _read_one(uri, read, seconds, max_bytes)
        reads.append(outcome)
        if outcome.outcome == "read":
            blocks += [EmbeddedResource(resource=c, annotations=block.annotations) for c in added]
        else:
            note = texts(language).link_not_read(outcome.outcome)
            blocks.append(TextContent(text=note, annotations=block.annotations))
    return blocks, reads


async def _read_one(uri: str, read: ReadResource, seconds: float, max_bytes: int,
                    ) -> tuple[LinkRead, list[TextResourceContents | BlobResourceContents]]:
    result: ReadResourceResult | None = None
    try:
        with anyio.move_on_after(seconds):
            result = await read(uri)
    except Exception as error:  # boundary: whatever the server or transport does is one outcome
        detail = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
        return LinkRead(uri=uri, outcome="failed", detail=detail or type(error).__name__), []
    if result is None:
        return LinkRead(uri=uri, outcome="timeout", detail=f"no answer within {seconds:g} s"), []
    digest = hashlib.sha256()
    size = 0
    for contents in result.contents:
        try:
            data = _bytes(contents)
        except (binascii.Error, ValueError):
            return LinkRead(uri=uri, outcome="failed", detail="a blob that is not base64"), []
        size += len(data)
        if size > max_bytes:
            return LinkRead(uri=uri, outcome="too_large", size=size,
                            detail=f"over {max_bytes:,} bytes"), []
        digest.update(data)
    return LinkRead(uri=uri, outcome="read", digest=digest.hexdigest(), size=size), list(
        result.contents)
