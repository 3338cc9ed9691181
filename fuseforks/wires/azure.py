"""Azure OpenAI: OpenAI's Chat Completions and Responses at a resource's address.

The bodies, placements, decoding, errors and streams are the OpenAI wires' own
(`openai_compat.py`, `responses.py`); what differs is where they go and how they are signed, as
the `openai` SDK's `AzureOpenAI` client sends them:

- **azure-chat**: `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=V`,
  the deployment being the model name.
- **azure-responses**: `{endpoint}/openai/responses?api-version=V`, the deployment in the body's
  `model`.

`{endpoint}` is the resource's address (`https://NAME.openai.azure.com`, `AZURE_OPENAI_ENDPOINT`),
the key goes in an `api-key` header (`AZURE_OPENAI_API_KEY`), or an Entra ID token as
`Authorization: Bearer …` from the HTTP edge (`credentials.py`). Azure adds refusals of its own:
a prompt its content filter stops is a 400 with code `content_filter` and an `innererror` of
`ResponsibleAIPolicyViolation` (`errors.py` reads it).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from fuseforks.core.canonical import ChatRequest
from fuseforks.core.errors import ConfigError
from fuseforks.images.vault import ImageVault
from fuseforks.wires import openai_compat, responses
from fuseforks.wires.base import Endpoint, HttpRequest

KEY_ENVS = ("AZURE_OPENAI_API_KEY",)
ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
API_VERSION_ENV = "OPENAI_API_VERSION"
"""The variables `AzureOpenAI` reads."""
CHAT_API_VERSION = "2024-10-21"
"""The generally available data-plane version that serves Chat Completions with tools and
images."""
RESPONSES_API_VERSION = "2025-04-01-preview"
"""The first version that serves `/openai/responses`."""
SCOPE = "https://cognitiveservices.azure.com/.default"
"""The Entra ID scope of Azure OpenAI's data plane."""


def address(environ: Mapping[str, str]) -> str:
    endpoint = environ.get(ENDPOINT_ENV, "")
    if not endpoint:
        raise ConfigError(f"no Azure OpenAI resource: set {ENDPOINT_ENV} "
                          "(https://NAME.openai.azure.com), or --base-url")
    return endpoint


def _rewritten(request: HttpRequest, url: str, endpoint: Endpoint) -> HttpRequest:
    """The OpenAI wire's request at Azure's URL, with Azure's key header instead of a bearer."""
    headers = {k: v for k, v in request.headers.items() if k != "authorization"}
    headers.update(endpoint.auth("api-key"))
    return HttpRequest(url=url, headers=headers, body=request.body)


def _query(endpoint: Endpoint, default: str) -> str:
    return f"?api-version={quote(endpoint.api_version or default, safe='')}"


def encode_chat(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
                stream: bool = False) -> HttpRequest:
    plain = openai_compat.encode(request, vault, endpoint, stream=stream)
    url = endpoint.url(f"/openai/deployments/{quote(request.model, safe='')}/chat/completions"
                       + _query(endpoint, CHAT_API_VERSION))
    return _rewritten(plain, url, endpoint)


def encode_chat_stream(request: ChatRequest, vault: ImageVault, endpoint: Endpoint) -> HttpRequest:
    return encode_chat(request, vault, endpoint, stream=True)


def encode_responses(request: ChatRequest, vault: ImageVault, endpoint: Endpoint, *,
                     stream: bool = False) -> HttpRequest:
    plain = responses.encode(request, vault, endpoint, stream=stream)
    url = endpoint.url("/openai/responses" + _query(endpoint, RESPONSES_API_VERSION))
    return _rewritten(plain, url, endpoint)


def encode_responses_stream(request: ChatRequest, vault: ImageVault,
                            endpoint: Endpoint) -> HttpRequest:
    return encode_responses(request, vault, endpoint, stream=True)
