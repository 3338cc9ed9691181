"""The model names each simulated wire answers, and each provider's own "model not found".

A name the wire does not know is refused as that provider refuses it, so a typo in `--model`
fails here as it would at the service instead of being answered; `Simulator(any_model=True)`
(`fuseforks simulator --any-model`) answers every name. The profiles (`brain.py`) are names
the simulator answers on every wire. The error bodies are the providers' own words, each as the
service answered it:

- Anthropic: 404 `{"type":"error","error":{"type":"not_found_error","message":"model: NAME"},
  "request_id":"req_…"}` — the error object as in anthropics/claude-code#5349, the top-level
  `request_id` (also the `request-id` header) as in Anthropic's API errors page
  (docs.anthropic.com/en/api/errors, "Error shapes").
- OpenAI (Chat Completions and Responses): 404 `{"error":{"message":"The model `NAME` does not
  exist or you do not have access to it.","type":"invalid_request_error","param":null,
  "code":"model_not_found"}}` — shobrook/wut#14, openai/openai-agents-python#458 (kept in
  tests/wires/fixtures/errors/openai-model-not-found.json). The openai-compat wire answers it
  too, as api.openai.com does; Meta's Llama API, OpenAI-compatible, has no not-found body on
  record, so the meta-responses wire answers OpenAI's.
- Gemini: 404 `{"error":{"code":404,"message":"models/NAME is not found for API version v1beta,
  or is not supported for generateContent. Call ListModels to see the list of available models
  and their supported methods.","status":"NOT_FOUND"}}` — google-gemini/gemini-api-quickstart#20
  (v1beta), babaohuang/GeminiProChat#184 (v1); the version and the method are the request's.
- xAI: 404 `{"code":"not-found","error":"The model NAME does not exist or your team TEAM does
  not have access to it. If you believe this is a mistake, please contact support and quote
  your team ID and the model name."}` — xAI's docs, Advanced API Usage, Regional Endpoints
  (docs.x.ai).
- Perplexity: 400 `{"error":{"message":"Invalid model 'NAME'. Permitted models can be found in
  the documentation at https://docs.perplexity.ai/docs/getting-started/models.",
  "type":"invalid_model","code":400}}` — FerroxLabs/wayland#603.
- Bedrock: 400 `{"message":"The provided model identifier is invalid."}`, a
  `ValidationException` — boto/boto3's and many clients' reports (iOfficeAI/AionCore#377 quotes
  the body).
- Vertex AI: 404 `Publisher Model `projects/P/locations/L/publishers/PUB/models/NAME` not
  found.`, status `NOT_FOUND`, in Google's error shape.
- Azure OpenAI: 404 `DeploymentNotFound`, "The API deployment for this resource does not
  exist. …" (the model is a deployment's name there).
- Ollama: 404 `model "NAME" not found, try pulling it first`; vLLM: 404 `The model `NAME` does
  not exist.` (`NotFoundError`); llama.cpp's server answers with the model it runs, whatever the
  name; LM Studio has no not-found body on record, so it answers OpenAI's.
"""

from __future__ import annotations

from fuseforks.simulator.brain import (
    IMAGE_IGNORING_MODELS,
    IMAGE_REFUSING_MODELS,
    TOOL_OUTPUT_IMAGE_REFUSING_MODELS,
    WEBP_REFUSING_MODELS,
)
from fuseforks.simulator.shapes import JSON, Reply, error_headers

_OPENAI = frozenset({
    "gpt-6-sol", "gpt-6-luna", "gpt-5.5", "gpt-5.5-pro", "gpt-5.5-mini", "gpt-5.4-mini", "gpt-5",
    "gpt-4.1", "gpt-4o", "o4-mini", "o3",
})
_GEMINI = frozenset({
    "gemini-3.8-pro", "gemini-3.8-flash", "gemini-3.5-flash-lite", "gemini-2.5-pro",
    "gemini-2.5-flash", "gemini-2.0-flash", "gemini-1.5-pro",
})

KNOWN_MODELS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({
        "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-4-6",
        "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-haiku-4-5",
    }),
    # OpenAI's own models, and Gemini's through its OpenAI-compatible endpoint.
    "openai-compat": _OPENAI | {"gemini-3.8-flash", "gemini-3.5-flash-lite"},
    "gemini": _GEMINI,
    "openai-responses": _OPENAI,
    "xai-responses": frozenset({"grok-4.7", "grok-4.6", "grok-4.5", "grok-code-fast-1"}),
    "meta-responses": frozenset({
        "muse-spark-latest", "Llama-4-Maverick-17B-128E-Instruct-FP8",
        "Llama-4-Scout-17B-16E-Instruct-FP8",
    }),
    "perplexity-responses": frozenset({
        "perplexity/sonar", "google/gemini-3.7-flash", "openai/gpt-5.5",
        "anthropic/claude-sonnet-5-5",
    }),
    # Bedrock's model ids and inference profiles; Mistral's Pixtral takes images in a user
    # message but not in a tool result.
    "bedrock-converse": frozenset({
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "global.anthropic.claude-sonnet-4-6",
        "anthropic.claude-haiku-4-5-20251001-v1:0", "us.amazon.nova-pro-v1:0",
        "amazon.nova-lite-v1:0", "us.meta.llama4-maverick-17b-instruct-v1:0",
        "mistral.pixtral-large-2502-v1:0",
    }),
    "vertex-gemini": _GEMINI,
    "vertex-anthropic": frozenset({
        "claude-sonnet-5-5", "claude-opus-4-6", "claude-sonnet-4-5@20250929",
        "claude-haiku-4-5@20251001",
    }),
    # Azure names a deployment; the simulator's deployments are named after their models.
    "azure-chat": _OPENAI,
    "azure-responses": _OPENAI,
    "ollama": frozenset({"qwen2.5vl:7b", "gemma3:12b", "llama3.2-vision:11b", "llava:13b"}),
    "vllm": frozenset({"Qwen/Qwen2.5-VL-7B-Instruct", "google/gemma-3-12b-it",
                       "moonshotai/Kimi-K2.5"}),
    "llamacpp": frozenset({"gemma-3-4b-it"}),
    "lmstudio": frozenset({"qwen2.5-vl-7b-instruct", "google/gemma-3-12b"}),
}
"""The names each wire answers, besides the profiles."""

ANY_NAME_WIRES = frozenset({"llamacpp"})
"""Servers that answer with the one model they run whatever the request names (llama.cpp's
`llama-server`): every name is known there."""

PROFILE_MODELS: frozenset[str] = (IMAGE_REFUSING_MODELS | IMAGE_IGNORING_MODELS
                                  | WEBP_REFUSING_MODELS | TOOL_OUTPUT_IMAGE_REFUSING_MODELS)
"""The simulator's profiles (`brain.py`), answered on every wire."""

XAI_TEAM_ID = "0f0f0f0f-0000-4000-8000-000000000000"
"""The team xAI's refusal names: the simulator's, as a key belongs to one team."""


def knows(wire: str, model: str) -> bool:
    return (wire in ANY_NAME_WIRES or model in PROFILE_MODELS
            or model in KNOWN_MODELS.get(wire, frozenset()))


def not_found(wire: str, model: str, seq: int, *, version: str = "v1beta",
              method: str = "generateContent", path: str = "") -> Reply:
    """The provider's answer to a model it does not know (`version` and `method`: the Gemini
    route asked; `path`: the cloud route that named the model)."""
    if wire == "bedrock-converse":
        return Reply(400, JSON.encode({"message": "The provided model identifier is invalid."}),
                     error_headers(wire, 400))
    if wire.startswith("vertex-"):
        resource = path[path.index("/projects/") + 1:].rpartition(":")[0]
        return Reply(404, JSON.encode({"error": {
            "code": 404, "message": f"Publisher Model `{resource}` not found.",
            "status": "NOT_FOUND"}}))
    if wire.startswith("azure-"):
        return Reply(404, JSON.encode({"error": {"code": "DeploymentNotFound", "message": (
            "The API deployment for this resource does not exist. If you created the deployment "
            "within the last 5 minutes, please wait a moment and try again.")}}))
    if wire == "ollama":
        return Reply(404, JSON.encode({"error": {
            "message": f'model "{model}" not found, try pulling it first', "type": "api_error",
            "param": None, "code": None}}))
    if wire == "vllm":
        return Reply(404, JSON.encode({"error": {
            "message": f"The model `{model}` does not exist.", "type": "NotFoundError",
            "param": None, "code": 404}}))
    if wire == "anthropic":
        request_id = f"req_011CSimulator{seq:011d}"
        return Reply(404, JSON.encode({
            "type": "error", "error": {"type": "not_found_error", "message": f"model: {model}"},
            "request_id": request_id}), [("request-id", request_id)])
    if wire == "gemini":
        return Reply(404, JSON.encode({"error": {
            "code": 404,
            "message": f"models/{model} is not found for API version {version}, or is not "
                       f"supported for {method}. Call ListModels to see the list of available "
                       "models and their supported methods.",
            "status": "NOT_FOUND"}}))
    if wire == "xai-responses":
        return Reply(404, JSON.encode({"code": "not-found", "error": (
            f"The model {model} does not exist or your team {XAI_TEAM_ID} does not have access "
            "to it. If you believe this is a mistake, please contact support and quote your team "
            "ID and the model name.")}))
    if wire == "perplexity-responses":
        return Reply(400, JSON.encode({"error": {
            "message": f"Invalid model '{model}'. Permitted models can be found in the "
                       "documentation at https://docs.perplexity.ai/docs/getting-started/models.",
            "type": "invalid_model", "code": 400}}))
    return Reply(404, JSON.encode({"error": {
        "message": f"The model `{model}` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": None, "code": "model_not_found"}}))
