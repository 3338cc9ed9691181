"""Keys and base URLs from the environment, and Retry-After in its three spellings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from fuseforks.wires import WIRES, endpoint_from_env, get_wire
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
    endpoint = endpoint_from_env(wire, environ={first: "sk-x"})
    assert (endpoint.api_key, endpoint.base_url) == ("sk-x", get_wire(wire).default_base_url)


def test_meta_falls_back_to_llama_api_key_and_base_url_is_overridable() -> None:
    endpoint = endpoint_from_env("meta-responses", "http://127.0.0.1:1/meta/v1",
                                 environ={"LLAMA_API_KEY": "llama"})
    assert (endpoint.api_key, endpoint.base_url) == ("llama", "http://127.0.0.1:1/meta/v1")
    assert "llama" not in repr(endpoint)


def test_retry_after_seconds_ms_and_http_date() -> None:
    assert retry_after_seconds(httpx.Headers({"retry-after": "2.5"})) == 2.5
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "150", "retry-after": "9"})) == 0.15
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 28 <= retry_after_seconds(httpx.Headers({"retry-after": when})) <= 30  # type: ignore[operator]
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers()) is None
