"""Keys and base URLs from the environment, and Retry-After in its three spellings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from fuseforks.core.errors import ConfigError, MissingKey
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
    "bedrock-converse": ("AWS_BEARER_TOKEN_BEDROCK",),  # a Bedrock API key
    "azure-chat": ("AZURE_OPENAI_API_KEY",),
    "azure-responses": ("AZURE_OPENAI_API_KEY",),
    "vllm": ("VLLM_API_KEY",),  # what `vllm serve --api-key` checks, when it was given one
}
# A cloud's address comes from the environment, as its own SDK reads it.
CLOUD_ENVIRON = {
    "bedrock-converse": ({"AWS_REGION": "eu-central-1"},
                         "https://bedrock-runtime.eu-central-1.amazonaws.com"),
    "vertex-gemini": ({"GOOGLE_CLOUD_PROJECT": "acme", "GOOGLE_CLOUD_LOCATION": "europe-west4"},
                      "https://europe-west4-aiplatform.googleapis.com/v1/projects/acme/"
                      "locations/europe-west4"),
    "vertex-anthropic": ({"ANTHROPIC_VERTEX_PROJECT_ID": "acme", "CLOUD_ML_REGION": "global"},
                         "https://aiplatform.googleapis.com/v1/projects/acme/locations/global"),
    "azure-chat": ({"AZURE_OPENAI_ENDPOINT": "https://acme.openai.azure.com"},
                   "https://acme.openai.azure.com"),
    "azure-responses": ({"AZURE_OPENAI_ENDPOINT": "https://acme.openai.azure.com"},
                        "https://acme.openai.azure.com"),
}
KEYED = [w for w in WIRES if w in EXPECTED_KEYS]


@pytest.mark.parametrize("wire", KEYED)
def test_each_wire_reads_its_providers_key_variable(wire: str) -> None:
    assert get_wire(wire).key_envs == EXPECTED_KEYS[wire]
    first = EXPECTED_KEYS[wire][0]
    environ, address = CLOUD_ENVIRON.get(wire, ({}, get_wire(wire).default_base_url))
    endpoint = resolve_endpoint(wire, environ={first: "sk-x", **environ})
    assert (endpoint.api_key, endpoint.base_url) == ("sk-x", address)


def test_the_wires_without_a_key_variable_are_vertex_and_the_keyless_local_servers() -> None:
    assert [w for w in WIRES if not get_wire(w).key_envs] == [
        "vertex-gemini", "vertex-anthropic", "ollama", "llamacpp", "lmstudio"]


@pytest.mark.parametrize(("wire", "address"), [
    ("ollama", "http://127.0.0.1:11434/v1"), ("vllm", "http://127.0.0.1:8000/v1"),
    ("llamacpp", "http://127.0.0.1:8080/v1"), ("lmstudio", "http://127.0.0.1:1234/v1")])
def test_a_local_server_is_at_its_default_address_and_needs_no_key(wire: str,
                                                                   address: str) -> None:
    endpoint = resolve_endpoint(wire, environ={})
    assert (endpoint.base_url, endpoint.api_key, endpoint.credential) == (address, "", None)
    elsewhere = resolve_endpoint(wire, "http://gpu-box.lan:9000/v1", environ={})
    assert (elsewhere.base_url, elsewhere.api_key) == ("http://gpu-box.lan:9000/v1", "")


@pytest.mark.parametrize("wire", list(CLOUD_ENVIRON))
def test_a_cloud_without_its_address_names_the_variables_to_set(wire: str) -> None:
    environ, _ = CLOUD_ENVIRON[wire]
    with pytest.raises(ConfigError) as missing:
        resolve_endpoint(wire, api_key="token-of-sixteen-chars", environ={})
    assert all(variable in str(missing.value) for variable in environ
               if variable not in ("GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION"))


def test_azure_takes_the_api_version_the_sdk_reads() -> None:
    endpoint = resolve_endpoint("azure-chat", environ={
        "AZURE_OPENAI_API_KEY": "k" * 32, "AZURE_OPENAI_ENDPOINT": "https://acme.openai.azure.com",
        "OPENAI_API_VERSION": "2025-01-01-preview"})
    assert endpoint.api_version == "2025-01-01-preview"


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
