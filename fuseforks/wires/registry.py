"""The seven wires by name. Names are the `backend=` values of the log."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from urllib.parse import urlsplit

from fuseforks.core.errors import MissingKey
from fuseforks.core.hosts import is_loopback_host
from fuseforks.core.names import WIRE_NAMES, WireName, parse_wire
from fuseforks.wires import anthropic, gemini, openai_compat, responses
from fuseforks.wires.base import Endpoint, Streaming, Wire


def _responses_wire(name: WireName, base_url: str, key_envs: tuple[str, ...]) -> Wire:
    return Wire(
        name=name,
        encode=responses.encode,
        decode=partial(responses.decode_for, name),
        classify=partial(responses.classify_for, name),
        default_base_url=base_url,
        key_envs=key_envs,
        placement=responses.PLACEMENT,
        placements=responses.PLACEMENTS,
        parameters=responses.PARAMETERS,
        streaming=Streaming(encode=responses.encode_stream,
                            accumulator=partial(responses.StreamAccumulator, name)),
    )


_ALL: tuple[Wire, ...] = (
    Wire(name=anthropic.NAME, encode=anthropic.encode, decode=anthropic.decode,
         classify=anthropic.classify, default_base_url=anthropic.DEFAULT_BASE_URL,
         key_envs=anthropic.KEY_ENVS, placement=anthropic.PLACEMENT,
         placements=anthropic.PLACEMENTS, parameters=anthropic.PARAMETERS,
         streaming=Streaming(encode=anthropic.encode_stream,
                             accumulator=anthropic.StreamAccumulator)),
    Wire(name=openai_compat.NAME, encode=openai_compat.encode, decode=openai_compat.decode,
         classify=openai_compat.classify, default_base_url=openai_compat.DEFAULT_BASE_URL,
         key_envs=openai_compat.KEY_ENVS, placement=openai_compat.PLACEMENT,
         placements=openai_compat.PLACEMENTS, parameters=openai_compat.PARAMETERS,
         jpeg_resend=True,
         streaming=Streaming(encode=openai_compat.encode_stream,
                             accumulator=openai_compat.StreamAccumulator)),
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
)

WIRES: tuple[WireName, ...] = WIRE_NAMES
KEY_VARIABLES: tuple[str, ...] = tuple(dict.fromkeys(v for w in _ALL for v in w.key_envs))
"""Every environment variable a wire reads its key from, once each, in the wires' order: the one
list (the local cluster and `compose.yaml` pass on each of them)."""
_BY_NAME: dict[str, Wire] = {w.name: w for w in _ALL}
assert tuple(_BY_NAME) == WIRE_NAMES, "every wire name has exactly one wire, in the same order"


def get_wire(name: str) -> Wire:
    """The wire called `name`; `UnknownName` (a `FuseforksError`) names the known wires."""
    return _BY_NAME[parse_wire(name)]


def is_local(base_url: str | None) -> bool:
    """The address is on this machine (127.0.0.0/8, ::1, localhost)."""
    return is_loopback_host(urlsplit(base_url or "").hostname or "")


def resolve_endpoint(name: WireName, base_url: str | None = None, api_key: str | None = None,
                     environ: Mapping[str, str] | None = None) -> Endpoint:
    """Where a wire's requests go, with which key — the one rule, for the library, the commands
    and the workers alike: `base_url` or the provider's public address; the key given, else the
    first of the wire's environment variables that is set. A provider on this machine (a local
    server, `fuseforks simulator`) needs no key; any other one does (`MissingKey`, naming the
    variables to set)."""
    env = os.environ if environ is None else environ
    wire = get_wire(name)
    if api_key is None:
        api_key = next((env[k] for k in wire.key_envs if env.get(k)), "")
    if not api_key and not is_local(base_url):
        raise MissingKey(f"no API key for {name}: set {' or '.join(wire.key_envs)} (a provider "
                         "on this machine, at 127.0.0.1 or localhost, needs none)")
    return Endpoint(base_url=base_url or wire.default_base_url, api_key=api_key)
