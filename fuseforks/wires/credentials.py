"""The clouds' credentials, through their own libraries, at the HTTP edge.

A cloud wire given no key signs each request with its cloud's credential chain, as that cloud's
own SDK would:

- **AWS** (`bedrock-converse`): Signature Version 4 by botocore (`SigV4Auth`), with credentials
  from botocore's chain — the environment (`AWS_ACCESS_KEY_ID`, …), a profile
  (`AWS_PROFILE`, `~/.aws`), SSO, a role (web identity, container, instance). Extra `bedrock`.
- **Google** (`vertex-gemini`, `vertex-anthropic`): an OAuth access token from google-auth's
  application default credentials (`GOOGLE_APPLICATION_CREDENTIALS`, a service account key,
  `gcloud auth application-default login`, the metadata server), refreshed before it expires.
  Extra `vertex`.
- **Azure** (`azure-chat`, `azure-responses`): an Entra ID token from azure-identity's
  `DefaultAzureCredential` (environment, workload identity, managed identity, the Azure CLI),
  for the scope of Azure OpenAI. Extra `azure`.

The libraries are imported only here, only when such a credential is made. Their calls block
(files, the metadata server, a token endpoint), so they run in a worker thread. Nothing they
hand out is kept beyond the process, and everything is taken out of what a provider echoes
back (`Credential.secrets`); no key or token ever reaches an event.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from fuseforks.core.errors import MissingKey
from fuseforks.wires.base import CloudCredential, Credential, HttpRequest

REFRESH_MARGIN = 300.0
"""Seconds before its expiry a token is refreshed: a request never leaves with one about to
lapse."""

_EXTRAS = {"aws": ("bedrock", "botocore"), "google": ("vertex", "google-auth"),
           "azure": ("azure", "azure-identity")}


def _missing(cloud: CloudCredential, why: str) -> MissingKey:
    extra, package = _EXTRAS[cloud]
    return MissingKey(f"{why} (the {package} credential chain comes with "
                      f"`pip install 'fuseforks[{extra}]'`)")


class AwsSigV4:
    """Signature Version 4 over each request as sent: its method, URL, signed headers and
    body. A session token, when the credentials carry one, goes in `X-Amz-Security-Token`."""

    def __init__(self, credentials: Any, region: str, service: str) -> None:
        self._credentials = credentials
        self.region = region
        self.service = service
        self._seen: list[str] = []

    async def headers(self, request: HttpRequest) -> dict[str, str]:
        return await anyio.to_thread.run_sync(self._sign, request)

    def _sign(self, request: HttpRequest) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        frozen = self._credentials.get_frozen_credentials()  # refreshes a role's when due
        for secret in (frozen.secret_key, frozen.token):
            if secret and secret not in self._seen:
                self._seen.append(secret)
        signed = AWSRequest(method="POST", url=request.url, data=request.body,
                            headers=dict(request.headers))
        SigV4Auth(frozen, self.service, self.region).add_auth(signed)
        wanted = ("authorization", "x-amz-date", "x-amz-security-token")
        return {k.lower(): v for k, v in signed.headers.items() if k.lower() in wanted}

    def secrets(self) -> list[str]:
        return list(self._seen)


class BearerTokens:
    """An access token minted by `mint` (token, expiry as a Unix time), used until
    `REFRESH_MARGIN` before it expires: Google's and Entra ID's alike."""

    def __init__(self, mint: Callable[[], tuple[str, float]]) -> None:
        self._mint = mint
        self._token = ""
        self._expires = 0.0
        self._seen: list[str] = []
        self._lock = anyio.Lock()

    async def headers(self, request: HttpRequest) -> dict[str, str]:
        async with self._lock:
            if not self._token or self._expires - REFRESH_MARGIN <= time.time():
                self._token, self._expires = await anyio.to_thread.run_sync(self._mint)
                self._seen.append(self._token)
        return {"authorization": f"Bearer {self._token}"}

    def secrets(self) -> list[str]:
        return list(self._seen)


def aws(environ: Mapping[str, str], region: str | None) -> tuple[Credential, str]:
    """botocore's credential chain and the region (`region`, else the profile's)."""
    try:
        import botocore.session
    except ImportError:
        raise _missing("aws", "no Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) and no AWS "
                              "credentials") from None
    session = botocore.session.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise MissingKey("no AWS credentials for bedrock-converse: set AWS_BEARER_TOKEN_BEDROCK "
                         "(a Bedrock API key), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
                         "AWS_PROFILE")
    region = region or session.get_config_variable("region")
    if not region:
        raise MissingKey("no AWS region for bedrock-converse: set AWS_REGION (or "
                         "AWS_DEFAULT_REGION), or a region in the profile")
    from fuseforks.wires.bedrock import SIGNING_NAME

    return AwsSigV4(credentials, region, SIGNING_NAME), region


def google() -> tuple[Credential, str | None]:
    """Application default credentials for the cloud-platform scope, and the project they
    name (None when they name none)."""
    try:
        import google.auth
        import google.auth.exceptions
        import google.auth.transport.requests
    except ImportError:
        raise _missing("google", "no Google credentials for Vertex AI") from None
    from fuseforks.wires.vertex import SCOPE

    try:
        found, project = google.auth.default(scopes=[SCOPE])
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise MissingKey(f"no Google credentials for Vertex AI: {exc}") from None

    def mint() -> tuple[str, float]:
        found.refresh(google.auth.transport.requests.Request())
        expiry = found.expiry.timestamp() if found.expiry else time.time() + 3600
        return str(found.token), expiry

    return BearerTokens(mint), project


def azure() -> Credential:
    """`DefaultAzureCredential` for Azure OpenAI's scope."""
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError:
        raise _missing("azure", "no Azure OpenAI key (AZURE_OPENAI_API_KEY) and no Entra ID "
                                "credentials") from None
    from fuseforks.wires.azure import SCOPE

    chain = DefaultAzureCredential()

    def mint() -> tuple[str, float]:
        token = chain.get_token(SCOPE)
        return token.token, float(token.expires_on)

    return BearerTokens(mint)
