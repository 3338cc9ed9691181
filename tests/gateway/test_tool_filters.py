"""Allow and deny lists of a server's tools (the entry's `tools`): the hub lists only the tools
they let through and refuses a call to any other as it refuses an unknown tool; the gateway's
client sees the same, and the session's start records the lists."""

from __future__ import annotations

from pathlib import Path

from fuseforks.mcp import load_config
from fuseforks.mcp.hub import ToolHub
from tests.gateway.conftest import shots, write_config

FILTERED = {"allow": ["s*", "pid", "grow"], "deny": ["*all", "grow"]}
"""Of the screenshot server's tools: screen and pid (`*all` takes small and stall; deny wins
over grow)."""


async def test_the_hub_lists_only_allowed_tools_and_refuses_the_others(tmp_path: Path) -> None:
    config = write_config(tmp_path, shots={**shots(), "tools": FILTERED})
    async with ToolHub(load_config(config)) as hub:
        listed = [tool.name for tool in hub.list_tools()]
        assert [name for name, _ in hub.listed_tools()] == listed
        refused = await hub.call_result("shots__retina", {})
        denied = await hub.call_result("shots__grow", {})
        allowed = await hub.call_result("shots__pid", {})
        output = await hub.call("shots__small", {}, "en")
    assert listed == ["shots__screen", "shots__pid"]
    assert refused == "unknown tool 'shots__retina'"
    assert denied == "unknown tool 'shots__grow'"
    assert not isinstance(allowed, str) and not allowed.is_error
    assert (output.is_error, output.fault) == (True, "unknown tool 'shots__small'")
