"""The simulator answers the models each wire knows, and any other name as the provider does: with
its own "model not found", status and body, which the official SDKs report as the service's and
fuseforks' wires refuse once, never retried. `any_model` answers every name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

from fuseforks.core.canonical import ChatRequest, UserMessage
from fuseforks.core.errors import WireRejected
from fuseforks.images.vault import ImageVault
from fuseforks.simulator import KNOWN_MODELS, PROFILE_MODELS, run_simulator
from fuseforks.simulator.models import ANY_NAME_WIRES
from fuseforks.wires import WIRES, Endpoint, get_wire
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import snapshot_request

README = Path(__file__).resolve().parents[2] / "README.md"
FAST = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02)
UNKNOWN = "nope-1"
OPENAI_NOT_FOUND = {"error": {
    "message": f"The model `{UNKNOWN}` does not exist or you do not have access to it.",
    "type": "invalid_request_error", "param": None, "code": "model_not_found"}}


def gemini_not_found(version: str = "v1beta", method: str = "generateContent") -> dict[str, Any]:
    return {"error": {
        "code": 404, "status": "NOT_FOUND",
        "message": f"models/{UNKNOWN} is not found for API version {version}, or is not supported "
                   f"for {method}. Call ListModels to see the list of available models and their "
                   "supported methods."}}


# What each service answers a model it does not know (the sources are named where the simulator
# writes these bodies, `fuseforks/simulator/models.py`).
NOT_FOUND: dict[str, tuple[int, dict[str, Any]]] = {
    "openai-compat": (404, OPENAI_NOT_FOUND),
    "gemini": (404, gemini_not_found()),
    "openai-responses": (404, OPENAI_NOT_FOUND),
    "xai-responses": (404, {"code": "not-found", "error": (
        f"The model {UNKNOWN} does not exist or your team 0f0f0f0f-0000-4000-8000-000000000000 "
        "does not have access to it. If you believe this is a mistake, please contact support "
        "and quote your team ID and the model name.")}),
    "meta-responses": (404, OPENAI_NOT_FOUND),
    "perplexity-responses": (400, {"error": {
        "message": f"Invalid model '{UNKNOWN}'. Permitted models can be found in the "
                   "documentation at https://docs.perplexity.ai/docs/getting-started/models.",
        "type": "invalid_model", "code": 400}}),
    "bedrock-converse": (400, {"message": "The provided model identifier is invalid."}),
    "vertex-gemini": (404, {"error": {"code": 404, "status": "NOT_FOUND", "message": (
        "Publisher Model `projects/fuseforks-sim/locations/us-central1/publishers/google/models/"
        f"{UNKNOWN}` not found.")}}),
    "vertex-anthropic": (404, {"error": {"code": 404, "status": "NOT_FOUND", "message": (
        "Publisher Model `projects/fuseforks-sim/locations/us-east5/publishers/anthropic/models/"
        f"{UNKNOWN}` not found.")}}),
    **dict.fromkeys(("azure-chat", "azure-responses"), (404, {"error": {
        "code": "DeploymentNotFound", "message": (
            "The API deployment for this resource does not exist. If you created the deployment "
            "within the last 5 minutes, please wait a moment and try again.")}})),
    "ollama": (404, {"error": {"message": f'model "{UNKNOWN}" not found, try pulling it first',
                               "type": "api_error", "param": None, "code": None}}),
    "vllm": (404, {"error": {"message": f"The model `{UNKNOWN}` does not exist.",
                             "type": "NotFoundError", "param": None, "code": 404}}),
    "lmstudio": (404, OPENAI_NOT_FOUND),
}
# llama.cpp's server answers with the one model it runs, whatever the request names.
NAMING_WIRES = [w for w in WIRES if w not in ANY_NAME_WIRES]


def hello(model: str) -> ChatRequest:
    return ChatRequest(model=model, messages=[UserMessage(text="hi")], max_tokens=64)


async def ask(http: httpx.AsyncClient, base_url: str, wire: str, model: str) -> httpx.Response:
    """The wire's own request for `model`, sent as it is."""
    request = get_wire(wire).encode(hello(model), ImageVault(), Endpoint(base_url, "k"))
    return await http.post(request.url, headers=request.headers, content=request.body)


@pytest.mark.parametrize("wire", [w for w in NAMING_WIRES if w != "anthropic"])
async def test_an_unknown_model_gets_the_providers_own_not_found(wire: str) -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        response = await ask(http, sim.base_urls[wire], wire, UNKNOWN)
    assert (response.status_code, response.json()) == NOT_FOUND[wire]
    assert [r.status for r in sim.received] == [NOT_FOUND[wire][0]]


async def test_anthropic_names_the_model_and_the_request() -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        first = await ask(http, sim.base_urls["anthropic"], "anthropic", "claude-sonet-9")
        second = await ask(http, sim.base_urls["anthropic"], "anthropic", "claude-sonet-9")
    assert first.status_code == 404
    body = first.json()
    assert body == {"type": "error", "error": {"type": "not_found_error",
                                               "message": "model: claude-sonet-9"},
                    "request_id": body["request_id"]}
    assert re.fullmatch(r"req_011C\w{20}", body["request_id"])
    assert first.headers["request-id"] == body["request_id"] != second.json()["request_id"]


@pytest.mark.parametrize(("version", "method", "query"), [
    ("v1", "generateContent", ""), ("v1beta", "streamGenerateContent", "?alt=sse"),
    ("v1beta", "streamGenerateContent", "")])
async def test_gemini_names_the_api_version_and_the_method_it_was_asked(
    version: str, method: str, query: str,
) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        base = sim.base_urls["gemini"].replace("/v1beta", f"/{version}")
        response = await http.post(f"{base}/models/{UNKNOWN}:{method}{query}",
                                   headers={"x-goog-api-key": "k"}, json=body)
    assert (response.status_code, response.json()) == (404, gemini_not_found(version, method))
    assert response.headers["content-type"] == "application/json"


async def test_a_streamed_request_for_an_unknown_model_is_refused_before_any_event() -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.base_urls['openai-responses']}/responses", headers={"authorization": "Bearer k"},
            json={"model": UNKNOWN, "input": "hi", "stream": True})
    assert (response.status_code, response.json()) == NOT_FOUND["openai-responses"]


async def test_every_known_model_and_profile_is_answered_on_its_wire() -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        for wire in WIRES:
            for model in sorted(KNOWN_MODELS[wire] | PROFILE_MODELS):
                response = await ask(http, sim.base_urls[wire], wire, model)
                assert response.status_code == 200, (wire, model, response.text)


async def test_a_name_known_on_one_wire_only_is_unknown_on_another() -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        response = await ask(http, sim.base_urls["anthropic"], "anthropic", "gemini-3.8-flash")
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "model: gemini-3.8-flash"


@pytest.mark.parametrize("wire", WIRES)
async def test_any_model_answers_every_name(wire: str) -> None:
    async with run_simulator(any_model=True) as sim, httpx.AsyncClient() as http:
        response = await ask(http, sim.base_urls[wire], wire, UNKNOWN)
    assert response.status_code == 200, response.text


# --- What a client makes of it ---------------------------------------------------------------------


async def test_llamacpp_answers_any_name_with_the_model_it_runs() -> None:
    async with run_simulator() as sim, httpx.AsyncClient() as http:
        response = await ask(http, sim.base_urls["llamacpp"], "llamacpp", UNKNOWN)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("wire", NAMING_WIRES)
async def test_fuseforks_wires_refuse_it_once_as_a_parameter_and_never_blame_the_images(
    wire: str,
) -> None:
    """A tool round with an image: the refusal names the model, so neither a retry, nor the
    JPEG resend, nor the engine's image fallback (which a 400 that names nothing would start)."""
    async with run_simulator() as sim, ProviderClient(
            wire, Endpoint(sim.base_urls[wire], "k"), policy=FAST) as client:
        vault = ImageVault()
        with pytest.raises(WireRejected) as refused:
            await client.chat(snapshot_request(vault, model=UNKNOWN), vault)
    status = NOT_FOUND[wire][0] if wire in NOT_FOUND else 404
    assert (refused.value.status, refused.value.refusal, refused.value.images_rejected) == (
        status, "parameter", False)
    assert refused.value.attempts == 1 and len(sim.received) == 1
    assert UNKNOWN in refused.value.message or wire in ("bedrock-converse", "azure-chat",
                                                         "azure-responses")


async def test_the_anthropic_sdk_reports_the_services_404() -> None:
    async with run_simulator() as sim:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=sim.base_urls["anthropic"],
                                          max_retries=2)
        async with client:
            with pytest.raises(anthropic.APIStatusError) as refused:
                await client.messages.create(model="claude-sonet-9", max_tokens=64,
                                             messages=[{"role": "user", "content": "hi"}])
    assert refused.value.status_code == 404
    body = refused.value.response.json()
    assert body["error"] == {"type": "not_found_error", "message": "model: claude-sonet-9"}
    assert refused.value.request_id == body["request_id"]
    assert len(sim.received) == 1  # the SDK does not retry a 404 either


@pytest.mark.parametrize(("wire", "api"), [("openai-compat", "chat"),
                                           ("openai-responses", "responses"),
                                           ("xai-responses", "responses"),
                                           ("perplexity-responses", "responses")])
async def test_the_openai_sdk_reports_the_services_answer(wire: str, api: str) -> None:
    async with (
        run_simulator() as sim,
        openai.AsyncOpenAI(api_key="k", base_url=sim.base_urls[wire], max_retries=2) as client,
    ):
        with pytest.raises(openai.APIStatusError) as refused:
            if api == "chat":
                await client.chat.completions.create(
                    model=UNKNOWN, messages=[{"role": "user", "content": "hi"}])
            else:
                await client.responses.create(model=UNKNOWN, input="hi")
    assert (refused.value.status_code, refused.value.response.json()) == NOT_FOUND[wire]
    assert len(sim.received) == 1


@pytest.mark.parametrize("version", ["v1beta", "v1"])
async def test_google_genai_reports_the_services_404(version: str) -> None:
    async with run_simulator() as sim:
        client = genai.Client(api_key="k", http_options=gtypes.HttpOptions(
            base_url=sim.base_urls["gemini"].rsplit("/", 1)[0], api_version=version))
        with pytest.raises(genai_errors.APIError) as refused:
            await client.aio.models.generate_content(model=UNKNOWN, contents="hi")
    expected = gemini_not_found(version)["error"]
    assert (refused.value.code, refused.value.status, refused.value.message) == (
        404, expected["status"], expected["message"])
    assert refused.value.details == {"error": expected}


# --- The README says which names -------------------------------------------------------------------


def test_the_readme_lists_the_models_the_simulator_knows() -> None:
    (table,) = re.findall(r"<!-- simulator models -->\n(.*?)<!-- /simulator models -->",
                          README.read_text(), re.S)
    listed: dict[str, set[str]] = {}
    for row in table.strip().splitlines()[2:]:
        wires, names = (cell.strip() for cell in row.strip().strip("|").split("|"))
        for wire in re.findall(r"`([^`]+)`", wires) or ["every wire"]:
            listed[wire] = set(re.findall(r"`([^`]+)`", names))
    assert listed.pop("every wire") == PROFILE_MODELS
    assert listed == {wire: set(names) for wire, names in KNOWN_MODELS.items()}


def test_each_wire_has_its_list_and_no_list_repeats_a_profile() -> None:
    assert set(KNOWN_MODELS) == set(WIRES)
    assert all(names and not names & PROFILE_MODELS for names in KNOWN_MODELS.values())
