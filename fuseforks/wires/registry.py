"""The seven wires by name. Names are the `backend=` values of the log (SPEC §7)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial

from fuseforks.wires import anthropic, gemini, openai_compat, responses
from fuseforks.wires.base import Endpoint, Wire


def _responses_wire(name: str, base_url: str, key_envs: tuple[str, ...]) -> Wire:
    return Wire(
        name=name,
        encode=responses.encode,
        decode=partial(responses.decode_for, name),
        classify=partial(responses.classify_for, name),
        default_base_url=base_url,
        key_envs=key_envs,
        placement=responses.PLACEMENT,
    )


def _module_wire(module: object) -> Wire:
    return Wire(
        name=module.NAME,  # type: ignore[attr-defined]
        encode=module.encode,  # type: ignore[attr-defined]
        decode=module.decode,  # type: ignore[attr-defined]
        classify=module.classify,  # type: ignore[attr-defined]
        default_base_url=module.DEFAULT_BASE_URL,  # type: ignore[attr-defined]
        key_envs=module.KEY_ENVS,  # type: ignore[attr-defined]
        placement=module.PLACEMENT,  # type: ignore[attr-defined]
    )


_ALL: tuple[Wire, ...] = (
    _module_wire(anthropic),
    _module_wire(openai_compat),
    _module_wire(gemini),
    _responses_wire("openai-responses", "https://api.openai.com/v1", ("OPENAI_API_KEY",)),
    _responses_wire("xai-responses", "https://api.x.ai/v1", ("XAI_API_KEY",)),
    # Meta's Llama API; its own SDK reads LLAMA_API_KEY, META_API_KEY is accepted first.
    _responses_wire("meta-responses", "https://api.llama.com/v1", ("META_API_KEY", "LLAMA_API_KEY")),
    _responses_wire("perplexity-responses", "https://api.perplexity.ai/v1", ("PERPLEXITY_API_KEY",)),
)

WIRES: tuple[str, ...] = tuple(w.name for w in _ALL)
_BY_NAME = {w.name: w for w in _ALL}


def get_wire(name: str) -> Wire:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown wire {name!r}; known: {', '.join(WIRES)}") from None


def endpoint_from_env(
    name: str, base_url: str | None = None, environ: Mapping[str, str] | None = None
) -> Endpoint:
    """The endpoint of a wire: `base_url` or the provider's default, and the key from the first
    of the wire's environment variables that is set (empty when none is)."""
    env = os.environ if environ is None else environ
    wire = get_wire(name)
    key = next((env[k] for k in wire.key_envs if env.get(k)), "")
    return Endpoint(base_url=base_url or wire.default_base_url, api_key=key)
