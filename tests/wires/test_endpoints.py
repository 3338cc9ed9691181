"""Keys and base URLs from the environment, and Retry-After in its three spellings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from fuseforks.core.errors import MissingKey
from fuseforks.wires import WIRES, get_wire, resolve_endpoint
from fuseforks.wires.http import retry_after_seconds

EXPECTED_KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai-compat": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai-responses": ("OPENAI_API_KEY",),
    "xai-responses": ("XAI_API_KEY",),
    "meta-responses": ("META_API_KEY", "LLAMA_API_KEY"),
    "perplexity-responses": ("PERPLEXITY_API_KEY",),
}


@pytest.mark.parametrize("wire", WIRES)
def test_each_wire_reads_its_providers_key_variable(wire: str) -> None:
    assert get_wire(wire).key_envs == EXPECTED_KEYS[wire]
    first = EXPECTED_KEYS[wire][0]
    endpoint = resolve_endpoint(wire, environ={first: "sk-x"})
    assert (endpoint.api_key, endpoint.base_url) == ("sk-x", get_wire(wire).default_base_url)


def test_meta_falls_back_to_llama_api_key_and_base_url_is_overridable() -> None:
    endpoint = resolve_endpoint("meta-responses", "http://127.0.0.1:1/meta/v1",
                                environ={"LLAMA_API_KEY": "llama"})
    assert (endpoint.api_key, endpoint.base_url) == ("llama", "http://127.0.0.1:1/meta/v1")
    assert "llama" not in repr(endpoint)


@pytest.mark.parametrize(("base_url", "needs_key"), [
    (None, True), ("https://llm.example.com/v1", True), ("http://127.0.0.1:8400/anthropic", False),
    ("http://localhost:11434/v1", False), ("http://[::1]:8080/v1", False),
    ("http://127.0.0.1.example.com/v1", True)])
def test_one_rule_for_keys_a_provider_on_this_machine_needs_none(base_url: str | None,
                                                                  needs_key: bool) -> None:
    if needs_key:
        with pytest.raises(MissingKey, match="^no API key for anthropic: set ANTHROPIC_API_KEY "
                           r"\(a provider on this machine, at 127.0.0.1 or localhost, needs "
                           r"none\)$"):
            resolve_endpoint("anthropic", base_url, environ={})
    else:
        assert resolve_endpoint("anthropic", base_url, environ={}).api_key == ""
    given = resolve_endpoint("anthropic", base_url, api_key="sk-given", environ={
        "ANTHROPIC_API_KEY": "sk-env"})
    assert given.api_key == "sk-given"


def test_retry_after_seconds_ms_and_http_date() -> None:
    assert retry_after_seconds(httpx.Headers({"retry-after": "2.5"})) == 2.5
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "150", "retry-after": "9"})) == 0.15
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 28 <= retry_after_seconds(httpx.Headers({"retry-after": when})) <= 30  # type: ignore[operator]
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers()) is None
