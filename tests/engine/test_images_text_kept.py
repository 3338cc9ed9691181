"""Over loopback, a turn's text reaches the provider exactly as it is recorded: long words that
are not media (a checksum, a token) unchanged, an image sent as text replaced — in the record and
in the request alike."""

from __future__ import annotations

import base64
import sys

from fuseforks.events.types import ToolResultRecorded, TurnStarted
from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.simulator import Script, run_simulator
from tests.engine.rig import bodies, events, run_turn
from tests.mcp.conftest import SERVERS
from tests.mcp.servers import pictures

CONTENT = StdioServer(name="content", command=sys.executable, args=[str(SERVERS / "content.py")])
REQUEST = f"Check the firmware image against its SHA-512 checksum {pictures.CHECKSUM} please."


async def turn_with(tool: str, request: str) -> tuple[object, list[dict]]:
    async with run_simulator(script=Script(call_tools=(tool,))) as sim, ToolHub([CONTENT]) as hub:
        result = await run_turn(sim, hub, "anthropic", "claude-sonnet-5-5", request=request)
        return result, bodies(sim)


def tool_result_content(body: dict) -> object:
    (block,) = [b for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"]
    return block["content"]


async def test_a_256_digit_checksum_and_long_tool_text_reach_the_model_unchanged() -> None:
    result, sent = await turn_with("content__long_words", REQUEST)
    (started,) = events(result, TurnStarted)
    (recorded,) = events(result, ToolResultRecorded)
    assert started.request == REQUEST
    assert recorded.body == pictures.LONG_WORDS
    assert sent[0]["messages"][0] == {"role": "user", "content": REQUEST}
    assert sent[1]["messages"][0] == {"role": "user", "content": REQUEST}
    assert tool_result_content(sent[1]) == pictures.LONG_WORDS


async def test_an_image_in_a_text_block_is_replaced_the_same_in_record_and_request() -> None:
    data = base64.b64encode(pictures.solid_jpeg((255, 0, 0))).decode()
    marked = f"frame: [base64 omitted: {len(data)} characters] (red)"
    result, sent = await turn_with("content__jpeg_as_text", "Look.")
    (recorded,) = events(result, ToolResultRecorded)
    assert recorded.body == marked
    assert tool_result_content(sent[1]) == marked
    assert all(data not in str(body) for body in sent)
