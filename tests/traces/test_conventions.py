"""The names the spans carry are the installed semantic conventions' own, not remembered ones."""

from __future__ import annotations

import warnings

from opentelemetry.semconv.attributes import error_attributes, server_attributes

from fuseforks.core.names import WIRE_NAMES
from fuseforks.traces import conventions as c

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # moved to the GenAI conventions' repo
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai

GEN_AI = {
    c.OPERATION_NAME: gen_ai.GEN_AI_OPERATION_NAME,
    c.PROVIDER_NAME: gen_ai.GEN_AI_PROVIDER_NAME,
    c.AGENT_NAME: gen_ai.GEN_AI_AGENT_NAME,
    c.CONVERSATION_ID: gen_ai.GEN_AI_CONVERSATION_ID,
    c.REQUEST_MODEL: gen_ai.GEN_AI_REQUEST_MODEL,
    c.RESPONSE_FINISH_REASONS: gen_ai.GEN_AI_RESPONSE_FINISH_REASONS,
    c.USAGE_INPUT_TOKENS: gen_ai.GEN_AI_USAGE_INPUT_TOKENS,
    c.USAGE_OUTPUT_TOKENS: gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS,
    c.USAGE_CACHE_READ_INPUT_TOKENS: gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
    c.USAGE_CACHE_CREATION_INPUT_TOKENS: gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
    c.TOOL_NAME: gen_ai.GEN_AI_TOOL_NAME,
    c.TOOL_CALL_ID: gen_ai.GEN_AI_TOOL_CALL_ID,
    c.TOOL_TYPE: gen_ai.GEN_AI_TOOL_TYPE,
    c.INPUT_MESSAGES: gen_ai.GEN_AI_INPUT_MESSAGES,
    c.OUTPUT_MESSAGES: gen_ai.GEN_AI_OUTPUT_MESSAGES,
    c.SYSTEM_INSTRUCTIONS: gen_ai.GEN_AI_SYSTEM_INSTRUCTIONS,
    c.TOOL_DEFINITIONS: gen_ai.GEN_AI_TOOL_DEFINITIONS,
    c.TOOL_CALL_ARGUMENTS: gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS,
    c.TOOL_CALL_RESULT: gen_ai.GEN_AI_TOOL_CALL_RESULT,
}

OURS = {value for name, value in vars(c).items() if name.isupper() and isinstance(value, str)}
"""Every name the spans may carry, as fuseforks spells it."""


def test_the_attribute_names_are_the_installed_conventions() -> None:
    assert {ours: ours for ours in GEN_AI} == GEN_AI
    assert c.SERVER_ADDRESS == server_attributes.SERVER_ADDRESS
    assert c.ERROR_TYPE == error_attributes.ERROR_TYPE
    assert error_attributes.ErrorTypeValues.OTHER.value == c.ERROR_OTHER
    assert "gen_ai.tool.result" not in OURS  # the result is gen_ai.tool.call.result


def test_the_operation_and_provider_names_are_members_of_the_conventions_lists() -> None:
    operations = {v.value for v in gen_ai.GenAiOperationNameValues}
    assert {c.INVOKE_AGENT, c.CHAT, c.EXECUTE_TOOL} <= operations
    providers = {v.value for v in gen_ai.GenAiProviderNameValues}
    assert set(c.PROVIDERS) == set(WIRE_NAMES)
    # Meta and the local servers have no entry (yet): each its own lowercase name
    assert {w: p for w, p in c.PROVIDERS.items() if p not in providers}.items() <= {
        "meta-responses": "meta", "ollama": "ollama", "vllm": "vllm", "llamacpp": "llama.cpp",
        "lmstudio": "lmstudio"}.items()
    assert c.PROVIDERS["bedrock-converse"] == gen_ai.GenAiProviderNameValues.AWS_BEDROCK.value
    assert c.PROVIDERS["vertex-anthropic"] == gen_ai.GenAiProviderNameValues.GCP_VERTEX_AI.value
    assert c.PROVIDERS["azure-chat"] == gen_ai.GenAiProviderNameValues.AZURE_AI_OPENAI.value
    assert c.PROVIDERS["gemini"] == gen_ai.GenAiProviderNameValues.GCP_GEMINI.value
    assert c.PROVIDERS["xai-responses"] == gen_ai.GenAiProviderNameValues.X_AI.value
    # gen_ai.system is the older name (its list says "xai" where provider.name says "x_ai"):
    # the spans carry the current one only
    assert "gen_ai.system" not in OURS


def test_content_attributes_are_the_opt_in_ones() -> None:
    assert {
        "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
        "gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} == c.CONTENT_ATTRIBUTES
    fuseforks_own = [value for name, value in vars(c).items()
                     if name.isupper() and isinstance(value, str) and value.startswith("fuseforks")]
    assert fuseforks_own and all(v.startswith(c.PREFIX) for v in fuseforks_own)
