"""Client profiles: the limits of the MCP client in front of the gateway, as data.

A profile is the image pipeline's numbers (`ImageLimits`: long edge, bytes per image, images per
result) and the client's limit on a whole tool result (`ResultLimits`), nothing else: the rules
are the engine's, in `fuseforks.images`. Where the numbers come from (docs/gateway.md says more):

- Anthropic's API refuses an image with an edge over 8,000 px, over 2,000 px in a request with
  many images (more than 20), and an image over 5 MB of base64. A client keeps every image of a
  conversation in every later request, so one image over the many-image limit breaks every
  request after the twentieth image.
- Anthropic scales an image down to a long edge of about 1,568 px anyway: larger ones cost bytes
  and time and show the model nothing more. This is the engine's own size.
- Claude Desktop refuses a tool result over 1 MB (read as 1,000,000 bytes, the smaller reading).
- Claude Code refuses tool output over `MAX_MCP_OUTPUT_TOKENS` (25,000 tokens unless set), and has
  counted an image's base64 text as text while doing so (about four characters a token): the
  budget of a whole result is counted that way here, the safe reading.

- VS Code scales an image with both sides over 768 px down to a 768 px short edge, and writes a
  scaled image that is not JPEG as PNG while keeping the server's type: a WebP would reach the
  model as PNG bytes called WebP. `vscode` sends images already at that size, as PNG or JPEG.
- Codex CLI and opencode give their model only a result's `structuredContent` when it has one,
  and drop its content blocks, images included: `structured-first` keeps the images reaching the
  model (`ClientProfile.structured_first`).

Every profile lets an image that is too large after re-encoding shrink until it fits (the engine
drops it instead): a smaller picture is worth more to a client than a note that there was one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import msgspec

from fuseforks.core.errors import UnknownName
from fuseforks.core.media import (
    ENGINE_LIMITS,
    MAX_EDGE_PX,
    MAX_IMAGES_PER_RESULT,
    ImageLimits,
    ResultLimits,
)

API_MAX_EDGE_PX = 8000
"""Anthropic's limit on an image's edge."""
MANY_IMAGES_MAX_EDGE_PX = 2000
"""Anthropic's limit on an image's edge in a request with more than 20 images."""
API_MAX_IMAGE_BYTES = 5 * 1024 * 1024 * 3 // 4
"""An image whose base64 text is at most 5 MiB (Anthropic's limit counts the base64)."""
DESKTOP_RESULT_BYTES = 1_000_000
"""Claude Desktop's limit on one tool result (1 MB)."""
CODE_RESULT_TOKENS = 25_000
"""Claude Code's default `MAX_MCP_OUTPUT_TOKENS`."""
CODE_TOKENS_ENV = "MAX_MCP_OUTPUT_TOKENS"
VSCODE_SHORT_EDGE_PX = 768
"""VS Code scales an image with both sides over this to a short edge of it, and sends a scaled
image that is not JPEG as PNG bytes under the server's type."""


class ClientProfile(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    summary: str
    limits: ImageLimits
    result_limits: ResultLimits = ResultLimits()
    structured_first: bool = False
    """The client gives its model a result's `structuredContent` alone when there is one, and
    drops the content blocks beside it. A result with an image then goes without
    `structuredContent`, its JSON as one more text block (`fuseforks.mcp.reply`), and tools are
    offered without `outputSchema`, so the client's SDK asks for no structured content."""


def _profiles(environ: Mapping[str, str]) -> dict[str, ClientProfile]:
    tokens = environ.get(CODE_TOKENS_ENV, "").strip()
    code_tokens = int(tokens) if tokens.isdigit() and int(tokens) > 0 else CODE_RESULT_TOKENS
    return {
        "image-rules": ClientProfile(
            name="image-rules",
            summary="the engine's own limits, as a turn sends images: 1568 px, 2 MiB",
            limits=msgspec.structs.replace(ENGINE_LIMITS, shrink=True, split_pages=True)),
        "api-limits": ClientProfile(
            name="api-limits",
            summary="only what providers' APIs accept: 8000 px, 5 MB of base64",
            limits=ImageLimits(max_edge_px=API_MAX_EDGE_PX, max_bytes=API_MAX_IMAGE_BYTES,
                               max_images=MAX_IMAGES_PER_RESULT, shrink=True)),
        "many-images": ClientProfile(
            name="many-images",
            summary="the 2000 px limit of requests with many images",
            limits=ImageLimits(max_edge_px=MANY_IMAGES_MAX_EDGE_PX,
                               max_bytes=API_MAX_IMAGE_BYTES, shrink=True)),
        "claude-desktop": ClientProfile(
            name="claude-desktop",
            summary="1568 px, and a whole tool result within 1 MB",
            limits=ImageLimits(max_edge_px=MAX_EDGE_PX, max_bytes=API_MAX_IMAGE_BYTES,
                               shrink=True, split_pages=True),
            result_limits=ResultLimits(max_bytes=DESKTOP_RESULT_BYTES)),
        "claude-code": ClientProfile(
            name="claude-code",
            summary=f"1568 px, and a whole tool result within {CODE_TOKENS_ENV} tokens",
            limits=ImageLimits(max_edge_px=MAX_EDGE_PX, max_bytes=API_MAX_IMAGE_BYTES,
                               shrink=True, split_pages=True),
            result_limits=ResultLimits(max_tokens=code_tokens)),
        "vscode": ClientProfile(
            name="vscode",
            summary="1568 px and a 768 px short edge, PNG or JPEG: what VS Code passes unscaled",
            limits=msgspec.structs.replace(ENGINE_LIMITS, shrink=True, split_pages=True,
                                           max_short_edge_px=VSCODE_SHORT_EDGE_PX, webp=False)),
        "structured-first": ClientProfile(
            name="structured-first",
            summary="the engine's limits; a result with images sent without structuredContent",
            limits=msgspec.structs.replace(ENGINE_LIMITS, shrink=True, split_pages=True),
            structured_first=True),
    }


PROFILE_NAMES = ("auto", "image-rules", "api-limits", "many-images", "claude-desktop",
                 "claude-code", "structured-first", "vscode", "generic")
"""What `--profile` takes; `auto` picks one by the client's name (`CLIENT_PROFILES`). `generic`
is the old name of `api-limits`, still taken."""

ALIASES = {"generic": "api-limits"}

CLIENT_PROFILES = {
    "claude-ai": "claude-desktop",
    "claude-code": "claude-code",
    "codex-mcp-client": "structured-first",
    "opencode": "structured-first",
    # VS Code sends its product's long name: the stable build, Insiders, a build from source.
    "Visual Studio Code": "vscode",
    "Visual Studio Code - Insiders": "vscode",
    "Code - OSS": "vscode",
    # Known, with no limit or quirk the gateway can help with found: the engine's own limits.
    "cursor-vscode": "image-rules",
    "windsurf-client": "image-rules",
    "gemini-cli-mcp-client": "image-rules",
    "Zed": "image-rules",
    "continue-client": "image-rules",
    "Cline": "image-rules",
    "@cline/core": "image-rules",
    "goose": "image-rules",
    "@librechat/api-client": "image-rules",
}
"""The profile `auto` picks for a client, by the name it gives in `initialize` (Claude Desktop
calls itself `claude-ai`; where each name comes from: docs/gateway.md); any other client gets
`image-rules`: no model sees more of an image than about 1,568 px (Anthropic scales to it,
OpenAI's high detail and Gemini's tiles see no more), so a larger one costs a client bytes, time
and tokens for nothing."""


class LimitOverrides(msgspec.Struct, frozen=True, kw_only=True):
    """Numbers the user set over the profile's (None: the profile's own)."""

    max_edge_px: int | None = None
    max_bytes: int | None = None
    max_images: int | None = None
    result_max_bytes: int | None = None
    result_max_tokens: int | None = None


NO_OVERRIDES = LimitOverrides()


def profile_for(name: str, client: str, overrides: LimitOverrides = NO_OVERRIDES,
                environ: Mapping[str, str] | None = None) -> ClientProfile:
    """The profile `name` (or, for `auto`, the one for `client`), with the overrides applied.
    `environ`: where Claude Code's `MAX_MCP_OUTPUT_TOKENS` is read (this process's by default)."""
    if name not in PROFILE_NAMES:
        raise UnknownName(f"unknown profile {name!r}; known: {', '.join(PROFILE_NAMES)}")
    profiles = _profiles(os.environ if environ is None else environ)
    name = ALIASES.get(name, name)
    chosen = profiles[CLIENT_PROFILES.get(client, "image-rules") if name == "auto" else name]
    limits = msgspec.structs.replace(chosen.limits, **{
        field: value for field, value in (("max_edge_px", overrides.max_edge_px),
                                          ("max_bytes", overrides.max_bytes),
                                          ("max_images", overrides.max_images))
        if value is not None})
    result = msgspec.structs.replace(chosen.result_limits, **{
        field: value for field, value in (("max_bytes", overrides.result_max_bytes),
                                          ("max_tokens", overrides.result_max_tokens))
        if value is not None})
    return msgspec.structs.replace(chosen, limits=limits, result_limits=result)
