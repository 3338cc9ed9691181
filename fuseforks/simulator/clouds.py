"""What Vertex AI and Azure OpenAI check before the format they serve reads a request.

- Vertex AI's Claude (`rawPredict`, `streamRawPredict`): the model is in the path, so the body
  must not name one, and it must say which version it speaks (`"anthropic_version":
  "vertex-2023-10-16"`, or the dated version the `anthropic` SDK sends); what remains is
  the Messages body, which the Anthropic endpoint then checks as it checks its own.
- Azure OpenAI: every path takes an `api-version` query parameter, one the service serves;
  `/openai/responses` only from the first version that has it.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs

from fuseforks.simulator.shapes import JSON, Invalid, Reply

VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16"
"""The version Google's documentation of `rawPredict` names, and what fuseforks sends. The
`anthropic` SDK's `AnthropicVertex` sends its own Messages API version (a date) instead, which
the endpoint takes too."""
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}")
AZURE_CHAT_VERSIONS = frozenset({"2024-06-01", "2024-10-21", "2025-01-01-preview",
                                 "2025-03-01-preview", "2025-04-01-preview", "preview"})
AZURE_RESPONSES_VERSIONS = frozenset({"2025-03-01-preview", "2025-04-01-preview", "preview"})


def vertex_anthropic_body(payload: dict[str, object], model: str,
                          path: str) -> dict[str, object]:
    """The Messages body Vertex's Claude endpoint reads out of `payload` (the model from the
    path; a stream asked for by `streamRawPredict`)."""
    if "model" in payload:
        raise Invalid("model: Extra inputs are not permitted")
    version = payload.get("anthropic_version")
    if not (version == VERTEX_ANTHROPIC_VERSION or (isinstance(version, str)
            and _DATED.fullmatch(version))):
        raise Invalid("anthropic_version: Field required" if version is None else
                      f"anthropic_version: Input should be '{VERTEX_ANTHROPIC_VERSION}'")
    body = {k: v for k, v in payload.items() if k != "anthropic_version"}
    if path.endswith(":streamRawPredict") != bool(body.get("stream")):
        raise Invalid("stream: streamRawPredict streams and rawPredict does not")
    return {"model": model, **body}


def azure_version(wire: str, query: str) -> Reply | None:
    """Azure's answer to a missing or unknown `api-version` (None: the version is served)."""
    versions = parse_qs(query).get("api-version", [])
    if not versions:
        return Reply(400, JSON.encode({"error": {
            "code": "MissingApiVersionParameter",
            "message": "The api-version query parameter (?api-version=) is required for all "
                       "requests."}}))
    served = AZURE_RESPONSES_VERSIONS if wire == "azure-responses" else AZURE_CHAT_VERSIONS
    if versions[-1] not in served:
        return Reply(404, JSON.encode({"error": {"code": "404", "message": "Resource not found"}}))
    return None
