"""Placement frozen: read off each adapter's encoded request, and the no-image encoding.

The placement is *observed*: the test finds where the image's base64 sits in the encoded JSON
(inside the tool-result node or not), what the parts around it are, and whether carrying an image
made the message list one longer. Only the expected table below is written by hand.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest

from fuseforks.core.canonical import ChatRequest, ToolResultMessage
from fuseforks.core.names import Placement
from fuseforks.images.vault import ImageVault
from fuseforks.wires import WIRES, Endpoint, get_wire
from tests.wires.helpers import caption, form, tool_round, two_colour_jpeg

ENDPOINT = Endpoint(base_url="https://example.test/v1", api_key="k")

# The placement table as data: placement and the parts of the list that holds the image.
WIRE_PLACEMENTS = {
    "anthropic": ("native", ["image", "text"]),
    "openai-compat": ("alternate", ["text", "image_url"]),
    "gemini": ("native", ["inlineData"]),
    "openai-responses": ("native", ["input_text", "input_image"]),
    "xai-responses": ("native", ["input_text", "input_image"]),
    "meta-responses": ("native", ["input_text", "input_image"]),
    "perplexity-responses": ("native", ["input_text", "input_image"]),
    "bedrock-converse": ("native", ["image", "text"]),
    "vertex-gemini": ("native", ["inlineData"]),
    "vertex-anthropic": ("native", ["image", "text"]),
    "azure-chat": ("alternate", ["text", "image_url"]),
    "azure-responses": ("native", ["input_text", "input_image"]),
    "ollama": ("alternate", ["text", "image_url"]),
    "vllm": ("alternate", ["text", "image_url"]),
    "llamacpp": ("alternate", ["text", "image_url"]),
    "lmstudio": ("alternate", ["text", "image_url"]),
}

# Wire shape knowledge (not placement): the message list, and what a tool-result node looks like.
LIST_KEY = {"anthropic": "messages", "openai-compat": "messages", "gemini": "contents",
            "bedrock-converse": "messages"}
# Converse refuses two user messages in a row: its carrier goes on in the results' own message.
CARRIER_JOINS_RESULTS = {"bedrock-converse"}


def is_tool_result(wire: str, node: dict[str, Any]) -> bool:
    wire = form(wire)
    if wire == "bedrock-converse":
        return "toolResult" in node
    if wire == "anthropic":
        return node.get("type") == "tool_result"
    if wire == "openai-compat":
        return node.get("role") == "tool"
    if wire == "gemini":
        return "functionResponse" in node
    return node.get("type") == "function_call_output"


def part_kind(part: dict[str, Any]) -> str:
    return part.get("type") or next(iter(part))


def paths_to(node: Any, needle: str, trail: tuple = ()) -> list[tuple]:
    """Every chain of ancestors (dicts and lists) down to a string containing `needle`."""
    trail = (*trail, node)
    if isinstance(node, str):
        return [trail] if needle in node else []
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [p for child in children for p in paths_to(child, needle, trail)]


def encode(wire: str, request: ChatRequest, vault: ImageVault) -> dict[str, Any]:
    return msgspec.json.decode(get_wire(wire).encode(request, vault, ENDPOINT).body)


def observe(wire: str, placement: Placement | None = None) -> tuple[str, list[str]]:
    vault = ImageVault()
    jpeg = two_colour_jpeg()
    image = vault.put(jpeg, "image/jpeg")
    with_image = msgspec.structs.replace(
        tool_round([("camera_snapshot", '{"seq":7}', [image])]), placement=placement)
    without = tool_round([("camera_snapshot", '{"seq":7}', [])])
    body, plain = encode(wire, with_image, vault), encode(wire, without, vault)
    key = LIST_KEY.get(form(wire), "input")
    growth = len(body[key]) - len(plain[key])
    (path,) = paths_to(body, base64.b64encode(jpeg).decode())
    inside = any(isinstance(n, dict) and is_tool_result(wire, n) for n in path)
    holder = next(n for n in reversed(path) if isinstance(n, list))
    kinds = [part_kind(p) for p in holder]
    if inside and growth == 0:
        return "native", kinds
    if not inside and growth == (0 if wire in CARRIER_JOINS_RESULTS else 1):
        return "alternate", kinds
    return f"broken(inside={inside}, growth={growth})", kinds


def test_the_table_covers_exactly_the_wires() -> None:
    assert tuple(WIRE_PLACEMENTS) == WIRES


@pytest.mark.parametrize("wire", WIRES)
def test_placement_read_off_the_encoded_request_matches_spec_5(wire: str) -> None:
    assert observe(wire) == WIRE_PLACEMENTS[wire]


@pytest.mark.parametrize("wire", WIRES)
def test_the_placement_each_wire_declares_is_the_one_its_encoding_shows(wire: str) -> None:
    """The engine records `Wire.placement` with every image delivery; it must not drift."""
    assert get_wire(wire).placement == observe(wire)[0]


# Asked for the alternate placement, every wire puts the caption then the images in a user-role
# message right after the tool results, in its own part shapes.
ALTERNATE_PARTS = {
    "anthropic": ["text", "image"],
    "openai-compat": ["text", "image_url"],
    "gemini": ["text", "inlineData"],
    **{w: ["input_text", "input_image"] for w in WIRES if w.endswith("-responses")},
    "bedrock-converse": ["toolResult", "text", "image"],
    "vertex-gemini": ["text", "inlineData"],
    "vertex-anthropic": ["text", "image"],
    **{w: ["text", "image_url"] for w in ("azure-chat", "ollama", "vllm", "llamacpp", "lmstudio")},
}


@pytest.mark.parametrize("wire", WIRES)
def test_every_wire_places_images_alternately_when_asked(wire: str) -> None:
    assert observe(wire, "alternate") == ("alternate", ALTERNATE_PARTS[wire])
    assert "alternate" in get_wire(wire).placements


@pytest.mark.parametrize("wire", WIRES)
def test_none_is_the_wires_own_placement(wire: str) -> None:
    assert observe(wire, None) == observe(wire, get_wire(wire).placement)


def test_openai_compat_has_no_native_placement() -> None:
    vault = ImageVault()
    image = vault.put(two_colour_jpeg(), "image/jpeg")
    request = msgspec.structs.replace(tool_round([("camera_snapshot", "a", [image])]),
                                      placement="native")
    assert get_wire("openai-compat").placements == ("alternate",)
    with pytest.raises(ValueError, match="openai-compat places tool images: alternate"):
        encode("openai-compat", request, vault)


# Where the tool results are and where the carrier goes, per wire (shape knowledge).
def result_and_carrier_roles(wire: str, body: dict[str, Any]) -> list[str]:
    wire = form(wire)
    items = body[LIST_KEY.get(wire, "input")]
    roles = []
    for item in items:
        if wire == "bedrock-converse":
            is_results = "toolResult" in item["content"][0]
        elif wire == "anthropic":
            content = item["content"]
            is_results = isinstance(content, list) and content[0].get("type") == "tool_result"
        elif wire == "gemini":
            is_results = "functionResponse" in item["parts"][0]
        else:
            is_results = item.get("type") == "function_call_output"
        roles.append("results" if is_results else item.get("role") or item["type"])
    return roles


@pytest.mark.parametrize("wire", [w for w in WIRES if form(w) != "openai-compat"])
def test_native_wire_carrier_follows_the_run_of_results_with_every_caption(wire: str) -> None:
    vault = ImageVault()
    first = vault.put(two_colour_jpeg(), "image/jpeg")
    second = vault.put(two_colour_jpeg((255, 0, 0), (0, 0, 255)), "image/jpeg")
    request = msgspec.structs.replace(tool_round([
        ("camera_snapshot", "a", [first]), ("camera_status", "b", []),
        ("camera_snapshot", "c", [second])]), placement="alternate")
    body = encode(wire, request, vault)
    roles = result_and_carrier_roles(wire, body)
    if wire == "bedrock-converse":
        assert roles == ["user", "assistant", "results"]
        content = body["messages"][2]["content"]
        assert [b["toolResult"]["content"] for b in content[:3]] == [
            [{"text": "a"}], [{"text": "b"}], [{"text": "c"}]]
        carrier = content[3:]
        texts = [p["text"] for p in carrier if "text" in p]
        urls = [f"data:image/{p['image']['format']};base64,{p['image']['source']['bytes']}"
                for p in carrier if "image" in p]
    elif wire.endswith("-responses"):
        assert roles == ["user", "function_call", "function_call", "function_call",
                         "results", "results", "results", "user"]
        assert [i["output"] for i in body["input"][4:7]] == ["a", "b", "c"]
        carrier = body["input"][7]["content"]
        texts = [p["text"] for p in carrier if p["type"] == "input_text"]
        urls = [p["image_url"] for p in carrier if p["type"] == "input_image"]
    elif form(wire) == "anthropic":
        assert roles == ["user", "assistant", "results", "user"]
        assert [b["content"] for b in body["messages"][2]["content"]] == ["a", "b", "c"]
        carrier = body["messages"][3]["content"]
        texts = [p["text"] for p in carrier if p["type"] == "text"]
        urls = [f"data:{p['source']['media_type']};base64,{p['source']['data']}"
                for p in carrier if p["type"] == "image"]
    else:
        assert roles == ["user", "model", "results", "user"]
        responses = [p["functionResponse"] for p in body["contents"][2]["parts"]]
        assert [("parts" in r, r["response"]) for r in responses] == [
            (False, {"output": "a"}), (False, {"output": "b"}), (False, {"output": "c"})]
        carrier = body["contents"][3]["parts"]
        texts = [p["text"] for p in carrier if "text" in p]
        urls = [f"data:{p['inlineData']['mimeType']};base64,{p['inlineData']['data']}"
                for p in carrier if "inlineData" in p]
    assert texts == [caption("camera_snapshot", 1), caption("camera_snapshot", 1)]
    assert urls == [f"data:image/jpeg;base64,{vault.base64(first.digest)}",
                    f"data:image/jpeg;base64,{vault.base64(second.digest)}"]


@pytest.mark.parametrize("wire", WIRES)
def test_alternate_without_images_is_the_text_only_encoding(wire: str) -> None:
    request = msgspec.structs.replace(tool_round([("camera_status", "ready", [])]),
                                      placement="alternate")
    assert get_wire(wire).encode(request, ImageVault(), ENDPOINT).body == GOLDEN_FOR[wire].encode()


def test_openai_compat_carrier_follows_the_last_of_consecutive_tool_results() -> None:
    vault = ImageVault()
    first = vault.put(two_colour_jpeg(), "image/jpeg")
    second = vault.put(two_colour_jpeg((255, 0, 0), (0, 0, 255)), "image/jpeg")
    request = tool_round([("camera_snapshot", "a", [first]), ("camera_status", "b", [second])])
    messages = encode("openai-compat", request, vault)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [m["content"] for m in messages[3:5]] == ["a", "b"]  # tool messages: text only
    carrier = messages[5]["content"]
    assert [part_kind(p) for p in carrier] == ["text", "image_url", "text", "image_url"]
    assert [carrier[0]["text"], carrier[2]["text"]] == [
        caption("camera_snapshot", 1), caption("camera_status", 1)]
    assert carrier[1]["image_url"]["url"] == "data:image/jpeg;base64," + vault.base64(first.digest)
    assert carrier[3]["image_url"]["url"] == "data:image/jpeg;base64," + vault.base64(second.digest)


def test_openai_compat_carrier_waits_for_the_run_even_when_only_the_first_result_has_images() -> None:
    vault = ImageVault()
    image = vault.put(two_colour_jpeg(), "image/jpeg")
    request = tool_round([("camera_snapshot", "a", [image]), ("camera_status", "b", [])])
    messages = encode("openai-compat", request, vault)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [part_kind(p) for p in messages[5]["content"]] == ["text", "image_url"]


def test_carrier_without_caption_carries_images_only() -> None:
    vault = ImageVault()
    image = vault.put(two_colour_jpeg(), "image/jpeg")
    request = tool_round([("camera_snapshot", "a", [image])])
    result = request.messages[-1]
    assert isinstance(result, ToolResultMessage)
    bare = msgspec.structs.replace(
        request, messages=[*request.messages[:-1], msgspec.structs.replace(result, caption=None)])
    carrier = encode("openai-compat", bare, vault)["messages"][-1]["content"]
    assert [part_kind(p) for p in carrier] == ["image_url"]


@pytest.mark.parametrize("wire", ["anthropic", "gemini"])
def test_consecutive_tool_results_share_one_user_turn(wire: str) -> None:
    vault = ImageVault()
    image = vault.put(two_colour_jpeg(), "image/jpeg")
    request = tool_round([("camera_snapshot", "a", [image]), ("camera_status", "b", [])])
    body = encode(wire, request, vault)
    turns = body[LIST_KEY[wire]]
    assert len(turns) == 3
    items = turns[2]["content"] if wire == "anthropic" else turns[2]["parts"]
    assert len(items) == 2


# The text-only encoding of one tool round, byte for byte, as a text-only engine produced it.
TEXT_ONLY = {
    "anthropic": (
        '{"model":"sim-vision-1","max_tokens":512,"system":"You are a careful assistant.","messag'
        'es":[{"role":"user","content":"Take a photo and tell me what you see."},{"role":"assista'
        'nt","content":[{"type":"tool_use","id":"call_1","name":"camera_status","input":{}}]},{"r'
        'ole":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"ready"}]}'
        '],"tools":[{"name":"camera_snapshot","description":"Take a photo.","input_schema":{"type'
        '":"object","properties":{},"additionalProperties":false}},{"name":"camera_status","descr'
        'iption":"Report camera state.","input_schema":{"type":"object","properties":{},"addition'
        'alProperties":false}}]}'
    ),
    "openai-compat": (
        '{"model":"sim-vision-1","messages":[{"role":"system","content":"You are a careful assist'
        'ant."},{"role":"user","content":"Take a photo and tell me what you see."},{"role":"assis'
        'tant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"'
        'camera_status","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"re'
        'ady"}],"tools":[{"type":"function","function":{"name":"camera_snapshot","description":"T'
        'ake a photo.","parameters":{"type":"object","properties":{},"additionalProperties":false'
        '}}},{"type":"function","function":{"name":"camera_status","description":"Report camera s'
        'tate.","parameters":{"type":"object","properties":{},"additionalProperties":false}}}],"m'
        'ax_tokens":512}'
    ),
    "gemini": (
        '{"contents":[{"role":"user","parts":[{"text":"Take a photo and tell me what you see."}]}'
        ',{"role":"model","parts":[{"functionCall":{"name":"camera_status","args":{},"id":"call_1'
        '"}}]},{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"camera_status",'
        '"response":{"output":"ready"}}}]}],"systemInstruction":{"parts":[{"text":"You are a care'
        'ful assistant."}]},"tools":[{"functionDeclarations":[{"name":"camera_snapshot","descript'
        'ion":"Take a photo.","parametersJsonSchema":{"type":"object","properties":{},"additional'
        'Properties":false}},{"name":"camera_status","description":"Report camera state.","parame'
        'tersJsonSchema":{"type":"object","properties":{},"additionalProperties":false}}]}],"gene'
        'rationConfig":{"maxOutputTokens":512}}'
    ),
    "openai-responses": (
        '{"model":"sim-vision-1","input":[{"role":"user","content":"Take a photo and tell me what'
        ' you see."},{"type":"function_call","call_id":"call_1","name":"camera_status","arguments'
        '":"{}"},{"type":"function_call_output","call_id":"call_1","output":"ready"}],"instructio'
        'ns":"You are a careful assistant.","tools":[{"type":"function","name":"camera_snapshot",'
        '"description":"Take a photo.","parameters":{"type":"object","properties":{},"additionalP'
        'roperties":false},"strict":false},{"type":"function","name":"camera_status","description'
        '":"Report camera state.","parameters":{"type":"object","properties":{},"additionalProper'
        'ties":false},"strict":false}],"max_output_tokens":512}'
    ),
}
TEXT_ONLY["bedrock-converse"] = (
    '{"messages":[{"role":"user","content":[{"text":"Take a photo and tell me what you see."}]},'
    '{"role":"assistant","content":[{"toolUse":{"toolUseId":"call_1","name":"camera_status","in'
    'put":{}}}]},{"role":"user","content":[{"toolResult":{"toolUseId":"call_1","content":[{"tex'
    't":"ready"}]}}]}],"system":[{"text":"You are a careful assistant."}],"inferenceConfig":{"m'
    'axTokens":512},"toolConfig":{"tools":[{"toolSpec":{"name":"camera_snapshot","description"'
    ':"Take a photo.","inputSchema":{"json":{"type":"object","properties":{},"additionalProperti'
    'es":false}}}},{"toolSpec":{"name":"camera_status","description":"Report camera state.","in'
    'putSchema":{"json":{"type":"object","properties":{},"additionalProperties":false}}}}]}}'
)
# Vertex's Claude: the Messages body with the version first and the model in the URL instead.
TEXT_ONLY["vertex-anthropic"] = (
    '{"anthropic_version":"vertex-2023-10-16",'
    + TEXT_ONLY["anthropic"].removeprefix('{"model":"sim-vision-1",'))
GOLDEN_FOR = {w: TEXT_ONLY.get(w, TEXT_ONLY.get(form(w), "")) for w in WIRES}


@pytest.mark.parametrize("wire", WIRES)
def test_result_without_images_is_byte_identical_to_the_text_only_encoding(wire: str) -> None:
    vault = ImageVault()
    request = tool_round([("camera_status", "ready", [])])
    assert get_wire(wire).encode(request, vault, ENDPOINT).body == GOLDEN_FOR[wire].encode()


@pytest.mark.parametrize("wire", WIRES)
def test_a_caption_without_images_is_not_placed(wire: str) -> None:
    vault = ImageVault()
    request = tool_round([("camera_status", "ready", [])])
    result = request.messages[-1]
    assert isinstance(result, ToolResultMessage)
    stray = msgspec.structs.replace(
        request, messages=[*request.messages[:-1], msgspec.structs.replace(result, caption="(x)")])
    assert get_wire(wire).encode(stray, vault, ENDPOINT).body == GOLDEN_FOR[wire].encode()
