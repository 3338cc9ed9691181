"""Google Vertex AI: Gemini and Claude at a project's regional endpoint, with Google credentials.

Vertex serves the formats of two other wires, and this module restates neither:

- **vertex-gemini** is the Gemini wire (`gemini.py`: the same body, placements, decoding, errors
  and stream) at `{base}/publishers/google/models/{model}:generateContent` (streamed:
  `:streamGenerateContent?alt=sse`).
- **vertex-anthropic** is the Anthropic wire (`anthropic.py`: the same Messages body,
  placements, decoding, errors and stream) at `{base}/publishers/anthropic/models/{model}:rawPredict`
  (streamed: `:streamRawPredict`), the model named in the URL instead of the body and
  `"anthropic_version": "vertex-2023-10-16"` in the body instead of a header.

`{base}` is `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}`
(`aiplatform.googleapis.com` for `global`, `aiplatform.{us,eu}.rep.googleapis.com` for the two
multi-regions), as both official SDKs build it. Auth is an OAuth access token, `Authorization:
Bearer …`: a token given as the key, or one the HTTP edge gets from Google's application default
credentials (`credentials.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from fuseforks.core.canonical import ChatRequest
from fuseforks.core.errors import ConfigError
from fuseforks.images.vault import ImageVault
from fuseforks.wires import anthropic, gemini
from fuseforks.wires.base import JSON, Endpoint, HttpRequest
from fuseforks.wires.streaming import EVENT_STREAM

ANTHROPIC_VERSION = "vertex-2023-10-16"
"""The Messages version Vertex AI's `rawPredict` takes, in the body (the SDK's
`lib/vertex/_client.py`)."""
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
DEFAULT_LOCATION = "global"
"""google-genai's default when none is set; Claude's regions are named per model in Google's
model garden, so a Claude turn usually names one (`CLOUD_ML_REGION`)."""
GEMINI_ENVS = {"project": ("GOOGLE_CLOUD_PROJECT",), "location": ("GOOGLE_CLOUD_LOCATION",)}
"""The variables google-genai reads (`vertexai=True`)."""
ANTHROPIC_ENVS = {"project": ("ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT"),
                  "location": ("CLOUD_ML_REGION", "GOOGLE_CLOUD_LOCATION")}
"""The variables `AnthropicVertex` reads, then google-genai's."""
_MULTI_REGIONS = frozenset({"us", "eu"})


def base_url(project: str, location: str) -> str:
    """The project's endpoint in `location`, as google-genai and `AnthropicVertex` build it."""
    if location == "global":
        host = "aiplatform.googleapis.com"
    elif location in _MULTI_REGIONS:
        host = f"aiplatform.{location}.rep.googleapis.com"
    else:
        host = f"{location}-aiplatform.googleapis.com"
    return (f"https://{host}/v1/projects/{quote(project, safe='')}"
            f"/locations/{quote(location, safe='')}")


def address(envs: Mapping[str, tuple[str, ...]], environ: Mapping[str, str],
            project: str | None = None) -> str:
    """The base URL from the environment (the project from the credentials, when they name
    one and the environment does not); a `ConfigError` names what to set."""
    project = next((environ[v] for v in envs["project"] if environ.get(v)), project or "")
    location = next((environ[v] for v in envs["location"] if environ.get(v)), DEFAULT_LOCATION)
    if not project:
        raise ConfigError(f"no Google Cloud project for Vertex AI: set "
                          f"{' or '.join(envs['project'])}, or --base-url")
    return base_url(project, location)


def gemini_address(environ: Mapping[str, str], project: str | None = None) -> str:
    return address(GEMINI_ENVS, environ, project)


def anthropic_address(environ: Mapping[str, str], project: str | None = None) -> str:
    return address(ANTHROPIC_ENVS, environ, project)


def _headers(endpoint: Endpoint, stream: bool) -> dict[str, str]:
    headers = {"content-type": "application/json", **endpoint.auth("authorization", "Bearer ")}
    if stream:
        headers["accept"] = EVENT_STREAM
    return headers


def encode_gemini(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
                  stream: bool = False) -> HttpRequest:
    path = "/publishers/google" + gemini.model_path(request.model, stream=stream)
    return HttpRequest(url=endpoint.url(path), headers=_headers(endpoint, stream),
                       body=JSON.encode(gemini.content_body(request, vault)))


def encode_gemini_stream(request: ChatRequest, vault: ImageVault,
                         endpoint: Endpoint) -> HttpRequest:
    return encode_gemini(request, vault, endpoint, stream=True)


def encode_anthropic(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
                     stream: bool = False) -> HttpRequest:
    body = anthropic.message_body(request, vault, stream=stream)
    model = body.pop("model")
    body = {"anthropic_version": ANTHROPIC_VERSION, **body}
    method = "streamRawPredict" if stream else "rawPredict"
    path = f"/publishers/anthropic/models/{quote(model, safe='@')}:{method}"
    return HttpRequest(url=endpoint.url(path), headers=_headers(endpoint, stream),
                       body=JSON.encode(body))


def encode_anthropic_stream(request: ChatRequest, vault: ImageVault,
                            endpoint: Endpoint) -> HttpRequest:
    return encode_anthropic(request, vault, endpoint, stream=True)
