"""The wires by name. Names are the `backend=` values of the log.

Seven formats at their providers' own addresses; the clouds' wires (Bedrock's Converse, Vertex
AI's Gemini and Claude, Azure OpenAI's Chat Completions and Responses), which reuse those
formats' code wherever the format is the same; and four local servers by name, each the
openai-compat wire at the server's default address, without a key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from urllib.parse import urlsplit

from fuseforks.core.errors import MissingKey
from fuseforks.core.hosts import is_loopback_host
from fuseforks.core.names import WIRE_NAMES, WireName, parse_wire
from fuseforks.wires import anthropic, azure, bedrock, gemini, openai_compat, responses, vertex
from fuseforks.wires.base import Credential, Encode, Endpoint, ProviderLimits, Streaming, Wire


def _responses_wire(name: WireName, base_url: str, key_envs: tuple[str, ...], *,
                    encode: Encode = responses.encode,
                    encode_stream: Encode = responses.encode_stream,
                    **cloud: object) -> Wire:
    return Wire(
        name=name,
        encode=encode,
        decode=partial(responses.decode_for, name),
        classify=partial(responses.classify_for, name),
        default_base_url=base_url,
        key_envs=key_envs,
        placement=responses.PLACEMENT,
        placements=responses.PLACEMENTS,
        parameters=responses.PARAMETERS,
        streaming=Streaming(encode=encode_stream,
                            accumulator=partial(responses.StreamAccumulator, name)),
        **cloud,  # type: ignore[arg-type]
    )


def _chat_wire(name: WireName, base_url: str, key_envs: tuple[str, ...], *,
               encode: Encode = openai_compat.encode,
               encode_stream: Encode = openai_compat.encode_stream, **cloud: object) -> Wire:
    """The Chat Completions format: OpenAI's, a compatible endpoint, a local server, Azure."""
    return Wire(name=name, encode=encode, decode=openai_compat.decode,
                classify=openai_compat.classify, default_base_url=base_url, key_envs=key_envs,
                placement=openai_compat.PLACEMENT, placements=openai_compat.PLACEMENTS,
                parameters=openai_compat.PARAMETERS, jpeg_resend=True,
                streaming=Streaming(encode=encode_stream,
                                    accumulator=openai_compat.StreamAccumulator),
                **cloud)  # type: ignore[arg-type]


# What each provider documents about a request's images (docs/providers.md names the pages).
MB = 1024 * 1024
ANTHROPIC_LIMITS = ProviderLimits(images_per_request=100, image_bytes=5 * MB, edge_px=8000)
BEDROCK_LIMITS = ProviderLimits(images_per_request=20, image_bytes=3_750_000, edge_px=8000)
VERTEX_GEMINI_LIMITS = ProviderLimits(images_per_request=3000, image_bytes=7 * MB)
AZURE_LIMITS = ProviderLimits(image_bytes=20 * MB)

# The local servers' own default addresses (each project's documentation of its
# OpenAI-compatible server; docs/providers.md).
LOCAL_SERVERS: dict[WireName, str] = {
    "ollama": "http://127.0.0.1:11434/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",
    "lmstudio": "http://127.0.0.1:1234/v1",
}


_ALL: tuple[Wire, ...] = (
    Wire(name=anthropic.NAME, encode=anthropic.encode, decode=anthropic.decode,
         classify=anthropic.classify, default_base_url=anthropic.DEFAULT_BASE_URL,
         key_envs=anthropic.KEY_ENVS, placement=anthropic.PLACEMENT,
         placements=anthropic.PLACEMENTS, parameters=anthropic.PARAMETERS,
         streaming=Streaming(encode=anthropic.encode_stream,
                             accumulator=anthropic.StreamAccumulator),
         limits=ANTHROPIC_LIMITS),
    _chat_wire(openai_compat.NAME, openai_compat.DEFAULT_BASE_URL, openai_compat.KEY_ENVS),
    Wire(name=gemini.NAME, encode=gemini.encode, decode=gemini.decode,
         classify=gemini.classify, default_base_url=gemini.DEFAULT_BASE_URL,
         key_envs=gemini.KEY_ENVS, placement=gemini.PLACEMENT,
         placements=gemini.PLACEMENTS, parameters=gemini.PARAMETERS,
         streaming=Streaming(encode=gemini.encode_stream, accumulator=gemini.StreamAccumulator)),
    _responses_wire("openai-responses", "https://api.openai.com/v1", ("OPENAI_API_KEY",)),
    _responses_wire("xai-responses", "https://api.x.ai/v1", ("XAI_API_KEY",)),
    # Meta's Llama API; its own SDK reads LLAMA_API_KEY, META_API_KEY is accepted first.
    _responses_wire("meta-responses", "https://api.llama.com/v1", ("META_API_KEY", "LLAMA_API_KEY")),
    _responses_wire("perplexity-responses", "https://api.perplexity.ai/v1", ("PERPLEXITY_API_KEY",)),
    Wire(name=bedrock.NAME, encode=bedrock.encode, decode=bedrock.decode,
         classify=bedrock.classify, default_base_url="", key_envs=bedrock.KEY_ENVS,
         placement=bedrock.PLACEMENT, placements=bedrock.PLACEMENTS,
         parameters=bedrock.PARAMETERS,
         streaming=Streaming(encode=bedrock.encode_stream,
                             accumulator=bedrock.StreamAccumulator, framing="eventstream"),
         address=bedrock.address, credential="aws", error_body=bedrock.error_body,
         limits=BEDROCK_LIMITS),
    Wire(name="vertex-gemini", encode=vertex.encode_gemini, decode=gemini.decode,
         classify=gemini.classify, default_base_url="", key_envs=(),
         placement=gemini.PLACEMENT, placements=gemini.PLACEMENTS,
         parameters=gemini.PARAMETERS,
         streaming=Streaming(encode=vertex.encode_gemini_stream,
                             accumulator=gemini.StreamAccumulator),
         address=vertex.gemini_address, credential="google", limits=VERTEX_GEMINI_LIMITS),
    Wire(name="vertex-anthropic", encode=vertex.encode_anthropic, decode=anthropic.decode,
         classify=anthropic.classify, default_base_url="", key_envs=(),
         placement=anthropic.PLACEMENT, placements=anthropic.PLACEMENTS,
         parameters=anthropic.PARAMETERS,
         streaming=Streaming(encode=vertex.encode_anthropic_stream,
                             accumulator=anthropic.StreamAccumulator),
         address=vertex.anthropic_address, credential="google", limits=ANTHROPIC_LIMITS),
    _chat_wire("azure-chat", "", azure.KEY_ENVS, encode=azure.encode_chat,
               encode_stream=azure.encode_chat_stream, address=azure.address,
               credential="azure", limits=AZURE_LIMITS),
    _responses_wire("azure-responses", "", azure.KEY_ENVS, encode=azure.encode_responses,
                    encode_stream=azure.encode_responses_stream, address=azure.address,
                    credential="azure", limits=AZURE_LIMITS),
    *(_chat_wire(name, url, ("VLLM_API_KEY",) if name == "vllm" else (), local=True)
      for name, url in LOCAL_SERVERS.items()),
)

WIRES: tuple[WireName, ...] = WIRE_NAMES
KEY_VARIABLES: tuple[str, ...] = tuple(dict.fromkeys(v for w in _ALL for v in w.key_envs))
"""Every environment variable a wire reads its key from, once each, in the wires' order: the one
list (the local cluster and `compose.yaml` pass on each of them)."""
CREDENTIAL_VARIABLES: tuple[str, ...] = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                         "AZURE_CLIENT_SECRET", "AZURE_OPENAI_AD_TOKEN")
"""The secrets of the clouds' credential chains the environment may hold (botocore's and
azure-identity's variables): never sent as they are, kept out of the record all the same."""
_BY_NAME: dict[str, Wire] = {w.name: w for w in _ALL}
assert tuple(_BY_NAME) == WIRE_NAMES, "every wire name has exactly one wire, in the same order"


def get_wire(name: str) -> Wire:
    """The wire called `name`; `UnknownName` (a `FuseforksError`) names the known wires."""
    return _BY_NAME[parse_wire(name)]


def image_cap_for(name: WireName, cap: int) -> int:
    """The per-request cap a turn on this wire runs with: the one asked for, within the number
    of images the provider documents a request may carry (Bedrock's 20)."""
    most = get_wire(name).limits.images_per_request
    return cap if most is None else min(cap, most)


def is_local(base_url: str | None) -> bool:
    """The address is on this machine (127.0.0.0/8, ::1, localhost)."""
    return is_loopback_host(urlsplit(base_url or "").hostname or "")


def resolve_endpoint(name: WireName, base_url: str | None = None, api_key: str | None = None,
                     environ: Mapping[str, str] | None = None) -> Endpoint:
    """Where a wire's requests go, with which key — the one rule, for the library, the commands
    and the workers alike: `base_url` or the provider's address (its public one, a local
    server's default one, or a cloud's read from the environment: a region, a project, a
    resource); the key given, else the first of the wire's environment variables that is set.
    A provider on this machine (a local server, `fuseforks simulator`) needs no key. A cloud
    wire without a key takes its cloud's credential chain (`credentials.py`); any other
    provider without a key is refused (`MissingKey`, naming the variables to set)."""
    env = os.environ if environ is None else environ
    wire = get_wire(name)
    if api_key is None:
        api_key = next((env[k] for k in wire.key_envs if env.get(k)), "")
    api_version = env.get(azure.API_VERSION_ENV, "") if wire.name.startswith("azure-") else ""
    if api_key or wire.local or is_local(base_url):
        return Endpoint(base_url=base_url or _address(wire, env), api_key=api_key,
                        api_version=api_version)
    if wire.credential is None:
        raise MissingKey(f"no API key for {name}: set {' or '.join(wire.key_envs)} (a provider "
                         "on this machine, at 127.0.0.1 or localhost, needs none)")
    credential, found = _cloud_credential(wire, env)
    return Endpoint(base_url=base_url or _address(wire, env, found), api_version=api_version,
                    credential=credential)


def _address(wire: Wire, environ: Mapping[str, str], found: str | None = None) -> str:
    """The wire's default address: fixed, or read from the environment (`found`: what the
    credentials said, a region or a project)."""
    if wire.address is None:
        return wire.default_base_url
    if wire.name == bedrock.NAME:
        return bedrock.address(environ, found)
    return wire.address(environ) if found is None else _with_project(wire, environ, found)


def _with_project(wire: Wire, environ: Mapping[str, str], project: str) -> str:
    envs = vertex.GEMINI_ENVS if wire.name == "vertex-gemini" else vertex.ANTHROPIC_ENVS
    return vertex.address(envs, environ, project)


def _cloud_credential(wire: Wire, environ: Mapping[str, str]) -> tuple[Credential, str | None]:
    """The cloud's credential chain, and what it says about the address (AWS: the region;
    Google: the project)."""
    from fuseforks.wires import credentials

    if wire.credential == "aws":
        return credentials.aws(environ, bedrock.region(environ))
    if wire.credential == "google":
        return credentials.google()
    return credentials.azure(), None
