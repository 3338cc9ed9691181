"""What a gateway client gets: the plan of a server's answer for it, and that plan rendered.

The plan (`plan_for_client`) normalizes every image within the client's limits and, when the
client limits a whole result, fits the images beside the rest of it (the rest's size is measured
on the rendering itself, `reply_size`). The rendering (`render_reply`) is the server's own answer
with the plan's decisions and nothing else:

the client gets what the server sent, block by block, in order and in the shape the server sent
it (a tool result, a read resource, a prompt), with these changes only:
- each image — an image block, or an image in an embedded blob — is the image the plan sent (a
  pass-through keeps the server's own base64 text), or is left out when the plan dropped it or
  the session's cap cut it (`keep`: how many of the sent images go, in order);
- text (text blocks, embedded text resources, strings of a structured result) has any media in
  it cut out, as the record has it: base64 dumped as text is no picture to a model and costs a
  client its token limit;
- the notes (why an image is missing or smaller, in the village language) follow as one more
  text block — a tool result's last block, a read resource's last contents, a prompt's last
  message.
Audio, other blobs, resource links, annotations and `_meta` pass unchanged.

One change is a client's own (`structured_first`, from its profile): a client that gives its model
only a result's `structuredContent` when there is one would drop the images beside it, so a tool
result with an image goes to it without `structuredContent`, the JSON of it as one more text block
after the server's (`content_over_structured`). The plan is made of that result, so the record
holds what the client got.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import anyio.to_thread
import msgspec
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    TextContent,
    TextResourceContents,
)

from fuseforks.core.media import ImageLimits, ResultLimits, base64_size
from fuseforks.core.names import Language
from fuseforks.events.privacy import elide_base64
from fuseforks.images.fit import fit_result_images_async
from fuseforks.images.normalize import normalize_result_images_async
from fuseforks.images.types import NormalizedImage, ResultImages
from fuseforks.mcp.paging import paged
from fuseforks.mcp.plan import ClientSource, ResultPlan, blob_of, draft, slots_of
from fuseforks.ports.tools import ToolOutput, fault_output


def _elide_json(value: Any) -> Any:
    if isinstance(value, str):
        return elide_base64(value)
    if isinstance(value, list):
        return [_elide_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _elide_json(item) for key, item in value.items()}
    return value


def _data(image: NormalizedImage, server_text: str, empty: bool) -> str:
    if empty:
        return ""
    if image.path == "pass_through" and len(server_text) == base64_size(image.size):
        return server_text  # the same bytes: the server's own base64, not encoded again
    return base64.b64encode(image.data).decode("ascii")


def _blocks(plan: ResultPlan, keep: int, empty_images: bool) -> list[ContentBlock | None]:
    """Each of the server's blocks as the client gets it; None where an image was left out."""
    blocks: list[ContentBlock | None] = []
    sent = 0
    for block, planned in zip(plan.content, plan.blocks, strict=True):
        slot = plan.slots[planned.slot] if planned.slot is not None else None
        if slot is not None:
            image = slot.image
            if image is None or not (empty_images or sent < keep):
                blocks.append(None)
            elif isinstance(block, ImageContent):
                blocks.append(ImageContent(
                    type="image", data=_data(image, block.data, empty_images),
                    mime_type=image.media_type, annotations=block.annotations, _meta=block.meta))
            else:
                blob = blob_of(block)
                blocks.append(block.model_copy(update={"resource": BlobResourceContents(
                    uri=blob.uri, mime_type=image.media_type,
                    blob=_data(image, blob.blob, empty_images), _meta=blob.meta)}))
            sent += image is not None
        elif isinstance(block, TextContent):
            blocks.append(block.model_copy(update={"text": elide_base64(block.text)}))
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource,
                                                                TextResourceContents):
            text = block.resource.model_copy(update={"text": elide_base64(block.resource.text)})
            blocks.append(block.model_copy(update={"resource": text}))
        else:
            blocks.append(block)
    return blocks


class ClientOutput(ToolOutput, frozen=True, kw_only=True):
    """A client's answer: the output the record holds, and the plan the reply renders from.
    No plan: no server answered (`fault` says why; `refusal`: a server's own error, to hand on
    to the client as it was)."""

    plan: ResultPlan | None = None
    refusal: Any = None

    @classmethod
    def faulted(cls, reason: str, language: Language, refusal: Any = None) -> ClientOutput:
        return cls(**msgspec.structs.asdict(fault_output(reason, language)), refusal=refusal)


def client_output(plan: ResultPlan) -> ClientOutput:
    return ClientOutput(**msgspec.structs.asdict(plan.tool_output()), plan=plan)


def client_blocks(source: ClientSource) -> list[ContentBlock]:
    """The blocks of a server's result as one sequence: a tool result's content, a read
    resource's contents as embedded resources, a prompt's messages' contents."""
    if isinstance(source, CallToolResult):
        return list(source.content)
    if isinstance(source, ReadResourceResult):
        return [EmbeddedResource(type="resource", resource=c) for c in source.contents]
    return [message.content for message in source.messages]


def _holds(block: ContentBlock, value: Any) -> bool:
    """Whether `block` is a text block whose text is the JSON of `value`."""
    if not isinstance(block, TextContent):
        return False
    try:
        return bool(json.loads(block.text) == value)
    except ValueError:
        return False


def content_over_structured(source: CallToolResult) -> CallToolResult:
    """The result without `structuredContent`, its JSON as one more text block after the server's
    blocks (unless one of them already is that JSON, as the MCP specification asks a server to
    send): for a client that would read the structured content alone and drop the images."""
    value = source.structured_content
    if value is None:
        return source
    content = list(source.content)
    if not any(_holds(block, value) for block in content):
        content.append(TextContent(type="text", text=json.dumps(value, ensure_ascii=False)))
    return source.model_copy(update={"content": content, "structured_content": None})


async def plan_for_client(source: ClientSource, *, language: Language, limits: ImageLimits,
                          result_limits: ResultLimits,
                          structured_first: bool = False) -> ResultPlan:
    """The plan of a server's answer to a gateway client: every image within the client's
    limits, and, when the client limits a whole result, the images re-encoded smaller until
    they fit beside the rest of it (what still does not fit is cut by the session, from the
    record: `ResultLimits.images_kept`). `structured_first`: the client reads a result's
    `structuredContent` alone when there is one; a tool result with an image goes without it.
    With `limits.split_pages` a tall page goes in parts (`fuseforks.mcp.paging`)."""
    if limits.split_pages and isinstance(source, CallToolResult):
        source = await anyio.to_thread.run_sync(paged, source, limits, language)
    content = client_blocks(source)
    drafted = draft(content, "client", language)
    if structured_first and drafted.payloads and isinstance(source, CallToolResult):
        source = content_over_structured(source)
        content = client_blocks(source)
        drafted = draft(content, "client", language)
    images = (await normalize_result_images_async(drafted.payloads, limits)
              if drafted.payloads else ResultImages([], []))
    is_error = bool(getattr(source, "is_error", False))
    plan = ResultPlan(recipient="client", language=language, limits=limits, content=content,
                      blocks=drafted.blocks, slots=slots_of(drafted, images), is_error=is_error,
                      source=source)
    room = result_limits.image_room(reply_size(plan))
    if room is not None and images.kept:
        images = await fit_result_images_async(drafted.payloads, images, limits, room)
        plan = msgspec.structs.replace(plan, slots=slots_of(drafted, images))
    return msgspec.structs.replace(plan, bytes_without_images=reply_size(plan))



def render_reply(plan: ResultPlan, keep: int, notes: Sequence[str], *,
                 empty_images: bool = False) -> ClientSource:
    """What the client gets: the server's answer as the plan decided it, the first `keep` of its
    sent images, and `notes`. With `empty_images`, every sent image is there with empty data (to
    measure the rest)."""
    source = plan.source
    blocks = _blocks(plan, keep, empty_images)
    note = "\n".join(notes)
    if isinstance(source, CallToolResult):
        content = [block for block in blocks if block is not None]
        if note:
            content.append(TextContent(type="text", text=note))
        return CallToolResult(content=content,
                              structured_content=_elide_json(source.structured_content),
                              is_error=source.is_error, _meta=source.meta)
    if isinstance(source, ReadResourceResult):
        contents = [block.resource for block in blocks if isinstance(block, EmbeddedResource)]
        if note and source.contents:
            contents.append(TextResourceContents(uri=source.contents[0].uri,
                                                 mime_type="text/plain", text=note))
        return ReadResourceResult(contents=contents, _meta=source.meta)
    assert isinstance(source, GetPromptResult)
    messages = [message.model_copy(update={"content": block})
                for message, block in zip(source.messages, blocks, strict=True)
                if block is not None]
    if note:
        messages.append(PromptMessage(role="user", content=TextContent(type="text", text=note)))
    return source.model_copy(update={"messages": messages})


def reply_size(plan: ResultPlan) -> int:
    """Bytes of the reply's JSON with every sent image in it but its data left out, the notes
    included: what the reply costs a client before the images' base64 is counted."""
    skeleton = render_reply(plan, len(plan.kept), plan.notes, empty_images=True)
    return len(skeleton.model_dump_json(by_alias=True, exclude_none=True).encode())
