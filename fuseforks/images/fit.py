"""Fitting the images of one tool result into a size budget: the per-result limit of a client.

Some MCP clients refuse a whole tool result above a size (Claude Desktop: 1 MB) or count a
result's images against a token limit (Claude Code). Each image on its own may be within its
limits and the result still too large. Here the images are re-encoded smaller, from the
server's own bytes, until their base64 text fits the budget: the budget is shared out fairly
(an image already within its share keeps its size, the rest split what is left), and an image
that must shrink is normalized again with its share as the byte limit and `shrink` on.

What still does not fit (an image that cannot be made small enough, or a budget too small for
any picture) is not decided here: the caller caps the result (`ImagesCapped`), in the open.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio.to_thread
import msgspec

from fuseforks.core.media import ImageLimits, base64_size
from fuseforks.images.normalize import ImageBlock, normalize_image
from fuseforks.images.types import DroppedImage, NormalizedImage, ResultImages


def images_base64_size(images: Sequence[NormalizedImage]) -> int:
    return sum(base64_size(image.size) for image in images)


def _shares(sizes: list[int], budget: int) -> dict[int, int]:
    """Base64 characters each position of `sizes` may take: the smallest keep their size while
    it is within an equal share of what is left; the others split the rest equally."""
    remaining = budget
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    shares: dict[int, int] = {}
    while order:
        share = remaining // len(order)
        if sizes[order[0]] > share:
            return shares | dict.fromkeys(order, share)
        first = order.pop(0)
        shares[first] = sizes[first]
        remaining -= sizes[first]
    return shares


def fit_result_images(blocks: Sequence[ImageBlock], result: ResultImages,
                      limits: ImageLimits, budget: int) -> ResultImages:
    """`result` (the normalization of `blocks` under `limits`) with its kept images re-encoded
    so their base64 text takes at most `budget` characters, where that can be done.

    The kept images and their order stay; an image that cannot be brought under its share even at
    the smallest size becomes `too_large`. A result already within the budget is returned as is.
    """
    if images_base64_size(result.kept) <= budget:
        return result
    dropped_at = {d.index for d in result.dropped}
    kept_at = [i for i in range(len(blocks)) if i not in dropped_at][: len(result.kept)]
    shares = _shares([base64_size(image.size) for image in result.kept], max(budget, 0))
    outcomes: dict[int, NormalizedImage | DroppedImage] = {d.index: d for d in result.dropped}
    for position, (index, image) in enumerate(zip(kept_at, result.kept, strict=True)):
        share = shares[position]
        if base64_size(image.size) <= share:
            outcomes[index] = image
            continue
        smaller = msgspec.structs.replace(limits, max_bytes=max(1, share // 4 * 3), shrink=True)
        outcome = normalize_image(blocks[index], smaller)
        if isinstance(outcome, DroppedImage):
            outcome = msgspec.structs.replace(outcome, index=index)
        outcomes[index] = outcome
    ordered = [outcomes[i] for i in sorted(outcomes)]
    return ResultImages(kept=[o for o in ordered if isinstance(o, NormalizedImage)],
                        dropped=[o for o in ordered if isinstance(o, DroppedImage)])


async def fit_result_images_async(blocks: Sequence[ImageBlock], result: ResultImages,
                                  limits: ImageLimits, budget: int) -> ResultImages:
    """`fit_result_images` in a worker thread (it decodes and encodes whole images)."""
    if images_base64_size(result.kept) <= budget:
        return result
    return await anyio.to_thread.run_sync(fit_result_images, blocks, result, limits, budget)
