"""The tool result the gateway hands its client: the server's own blocks, images as decided.

The client gets what the server sent, block by block and in order, with three changes only:
- each image block is the normalized image (a pass-through image keeps the server's own base64
  text), or is left out when it was dropped or cut by the client's limit on a whole result;
- text (text blocks, embedded text resources, strings of the structured result) has any media
  in it cut out, as the record has it: base64 dumped as text is no picture to a model and costs
  a client its token limit;
- the notes the gateway adds (why an image is missing, in the village language) follow as one
  more text block.
Audio, blobs, resource links, annotations and `_meta` pass unchanged.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from mcp.types import (
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from fuseforks.events.privacy import elide_base64
from fuseforks.ports.tools import ToolOutput


def _elide_json(value: Any) -> Any:
    if isinstance(value, str):
        return elide_base64(value)
    if isinstance(value, list):
        return [_elide_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _elide_json(item) for key, item in value.items()}
    return value


def _image_data(block: ImageContent, output: ToolOutput, kept: int, empty: bool) -> str:
    if empty:
        return ""
    image = output.images[kept]
    if image.path == "pass_through":
        return block.data  # the same bytes: the server's own base64, not encoded again
    return base64.b64encode(image.data).decode("ascii")


def reply_blocks(content: Sequence[ContentBlock], output: ToolOutput, keep: int,
                 notes: Sequence[str], *, empty_images: bool = False) -> list[ContentBlock]:
    """The blocks the client gets. `keep`: how many of the kept images go (the cap); with
    `empty_images`, every kept image is there with empty data (to measure the rest)."""
    dropped = {d.index for d in output.dropped}
    blocks: list[ContentBlock] = []
    position = kept = 0
    for block in content:
        if isinstance(block, ImageContent):
            if position not in dropped:
                if empty_images or kept < keep:
                    blocks.append(ImageContent(
                        type="image", data=_image_data(block, output, kept, empty_images),
                        mime_type=output.images[kept].media_type, annotations=block.annotations,
                        _meta=block.meta))
                kept += 1
            position += 1
        elif isinstance(block, TextContent):
            blocks.append(block.model_copy(update={"text": elide_base64(block.text)}))
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource,
                                                                TextResourceContents):
            resource = block.resource.model_copy(update={"text": elide_base64(block.resource.text)})
            blocks.append(block.model_copy(update={"resource": resource}))
        else:
            blocks.append(block)
    if notes:
        blocks.append(TextContent(type="text", text="\n".join(notes)))
    return blocks


def reply(result: CallToolResult, output: ToolOutput, keep: int, notes: Sequence[str], *,
          empty_images: bool = False) -> CallToolResult:
    return CallToolResult(
        content=reply_blocks(result.content, output, keep, notes, empty_images=empty_images),
        structured_content=_elide_json(result.structured_content),
        is_error=result.is_error, _meta=result.meta)


def fault_reply(output: ToolOutput) -> CallToolResult:
    """The result of a call that reached no server's result: the fault, as a tool error."""
    return CallToolResult(content=[TextContent(type="text", text=output.text)], is_error=True)


def size_without_images(result: CallToolResult, output: ToolOutput,
                        notes: Sequence[str]) -> int:
    """Bytes of the reply's JSON with every kept image in it but its data left out: what the
    result costs a client before the images' base64 is counted."""
    skeleton = reply(result, output, len(output.images), notes, empty_images=True)
    return len(skeleton.model_dump_json(by_alias=True, exclude_none=True).encode())


def frame_size(result: CallToolResult) -> int:
    """Bytes of the server's result as JSON with its images' data left out (before any image
    is normalized): what is left of a client's limit for the images is the rest."""
    frame = result.model_copy(update={"content": [
        block.model_copy(update={"data": ""}) if isinstance(block, ImageContent) else block
        for block in result.content]})
    return len(frame.model_dump_json(by_alias=True, exclude_none=True).encode())
