"""Text and images interleaved by a server keep the server's order on the wires that can keep it
(Anthropic's `tool_result.content`, the Responses wires' `function_call_output.output`), over
loopback with a real MCP server; Gemini and openai-compat keep their own order."""

from __future__ import annotations

import base64
import hashlib
import sys
from typing import Any

from fuseforks.core.canonical import ImageRef, ToolResultMessage
from fuseforks.events.types import ToolResultRecorded
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.simulator import Script, run_simulator
from tests.engine.rig import bodies, events, run_turn
from tests.mcp.conftest import SERVERS
from tests.mcp.servers import pictures

CONTENT = StdioServer(name="content", command=sys.executable, args=[str(SERVERS / "content.py")])
RED = hashlib.sha256(pictures.solid_jpeg((255, 0, 0))).hexdigest()
GREEN = hashlib.sha256(pictures.solid_jpeg((0, 255, 0))).hexdigest()


def ref(digest: str) -> ImageRef:
    return ImageRef(digest=digest, media_type="image/jpeg", size=1)


def test_in_order_splits_the_text_at_each_image() -> None:
    message = ToolResultMessage(tool_call_id="c", name="t", text="A\nB\n(note)",
                                images=[ref(RED), ref(GREEN)], image_offsets=[1, 3])
    assert message.in_order() == ["A", ref(RED), "B", ref(GREEN), "(note)"]
    first = ToolResultMessage(tool_call_id="c", name="t", text="one", images=[ref(RED)],
                              image_offsets=[0])
    assert first.in_order() == [ref(RED), "one"]
    legacy = ToolResultMessage(tool_call_id="c", name="t", text="x", images=[ref(RED)])
    assert legacy.in_order() is None


async def run(wire: str, model: str) -> tuple[Any, list[dict[str, Any]]]:
    script = Script(call_tools=("content__interleaved",))
    async with run_simulator(script=script) as sim, ToolHub([CONTENT]) as hub:
        result = await run_turn(sim, hub, wire, model)
        return result, bodies(sim)


def digest_of(data: str) -> str:
    return hashlib.sha256(base64.b64decode(data)).hexdigest()


async def test_anthropic_keeps_text_image_text_image() -> None:
    result, sent = await run("anthropic", "claude-sonnet-5-5")
    (recorded,) = events(result, ToolResultRecorded)
    assert recorded.body == "frame A follows\nframe B follows"
    assert recorded.image_offsets == [15, 31]
    (block,) = [b for m in sent[1]["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b["type"] == "tool_result"]
    shape = [(c["type"], c.get("text") or digest_of(c["source"]["data"]))
             for c in block["content"]]
    assert shape == [("text", "frame A follows"), ("image", RED),
                     ("text", "frame B follows"), ("image", GREEN)]


async def test_responses_keep_text_image_text_image() -> None:
    _, sent = await run("openai-responses", "gpt-6-sol")
    (output,) = [i["output"] for i in sent[1]["input"] if i.get("type") == "function_call_output"]
    shape = [(p["type"], p.get("text") or digest_of(p["image_url"].split(",", 1)[1]))
             for p in output]
    assert shape == [("input_text", "frame A follows"), ("input_image", RED),
                     ("input_text", "frame B follows"), ("input_image", GREEN)]


async def test_gemini_keeps_its_own_order() -> None:
    _, sent = await run("gemini", "gemini-3.8-flash")
    responses = [p["functionResponse"] for c in sent[1]["contents"] for p in c["parts"]
                 if "functionResponse" in p]
    (response,) = responses
    assert [digest_of(p["inlineData"]["data"]) for p in response["parts"]] == [RED, GREEN]
