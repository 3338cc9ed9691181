"""The openai-compat attachment fallback: every WebP image of a request re-encoded as JPEG.

Some OpenAI-compatible endpoints refuse WebP, so a 400 to such a request is resent once with JPEG
(see docs/image-rules.md).
Transparency is flattened onto white (JPEG has none), quality 85 like the normalizer's re-encode.
The JPEG goes into the same per-turn vault, so a later round reuses its cached base64.
"""

from __future__ import annotations

import io

from msgspec.structs import replace
from PIL import Image

from fuseforks.core.canonical import ChatRequest, ImageRef, ToolResultMessage
from fuseforks.core.media import JPEG_QUALITY
from fuseforks.images.vault import ImageVault


def has_webp(request: ChatRequest) -> bool:
    return any(
        image.media_type == "image/webp"
        for m in request.messages if isinstance(m, ToolResultMessage)
        for image in m.images
    )


def webp_to_jpeg(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        image.seek(0)
        rgba = image.convert("RGBA")
    flat = Image.new("RGB", rgba.size, (255, 255, 255))
    flat.paste(rgba, mask=rgba.getchannel("A"))
    out = io.BytesIO()
    flat.save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def with_jpeg_images(request: ChatRequest, vault: ImageVault) -> tuple[ChatRequest, int]:
    """The request with every WebP image replaced by its JPEG; returns (request, converted)."""
    converted = 0
    cache: dict[str, ImageRef] = {}

    def convert(image: ImageRef) -> ImageRef:
        nonlocal converted
        if image.media_type != "image/webp":
            return image
        if image.digest not in cache:
            cache[image.digest] = vault.put(webp_to_jpeg(vault.get(image.digest)), "image/jpeg")
        converted += 1
        return cache[image.digest]

    messages = [
        replace(m, images=[convert(i) for i in m.images])
        if isinstance(m, ToolResultMessage) and m.images else m
        for m in request.messages
    ]
    return replace(request, messages=messages), converted
