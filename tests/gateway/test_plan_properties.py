"""Properties of the gateway over generated results, through real processes: a gateway in front
of a server that answers with whatever the test wrote, the official SDK client in front of it as
each profile's client. For every result: nothing raises; the images the client gets are exactly
the digests the record says were sent to it; every image the server sent reaches the client or
is named in a note; the profile's limits hold; no base64 run reaches a text the client reads."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from mcp import Client
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    TextContent,
    TextResourceContents,
)

from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.events.types import ResultSent, SessionStarted
from fuseforks.stores.sqlite import SqliteStore
from tests.gateway.conftest import MCP_SERVERS, PYTHON, stdio_gateway, write_config
from tests.helpers.results import check_delivery, is_image, pictures_of, results

PROFILES = [("auto", "claude-code"), ("auto", "claude-ai"), ("auto", "cursor-vscode"),
            ("many-images", "zed")]


def read_texts(result: CallToolResult) -> list[str]:
    found = []
    for block in result.content:
        if isinstance(block, TextContent):
            found.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource,
                                                                TextResourceContents):
            found.append(block.resource.text)
    return found


class Rig:
    def __init__(self, portal: BlockingPortal, client: Client, db: Path, served: Path) -> None:
        self.portal, self.client, self.db, self.served = portal, client, db, served

    def call(self, result: dict[str, Any]) -> CallToolResult:
        self.served.write_text(json.dumps(result))
        return self.portal.call(self.client.call_tool, "served__blocks", {})

    def record(self) -> tuple[SessionStarted, ResultSent]:
        with SqliteStore(self.db, read_only=True) as store:
            [info] = store.turns()
            events = [e.event for e in store.read(info.turn_id)]
        started = events[0]
        assert isinstance(started, SessionStarted)
        sent = [e for e in events if isinstance(e, ResultSent)]
        return started, sent[-1]


@contextmanager
def rig(folder: Path, profile: str, client: str) -> Iterator[Rig]:
    served = folder / "served.json"
    config = write_config(folder, served={
        "command": PYTHON, "args": [str(MCP_SERVERS / "served_blocks.py")],
        "env": {"SERVED_BLOCKS": str(served)}})
    db = folder / "g.db"
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
            stdio_gateway(config, "--db", str(db), "--profile", profile, client=client)) as c:
        yield Rig(portal, c, db, served)


def check(rig: Rig, result: dict[str, Any]) -> None:
    got = rig.call(result)
    started, sent = rig.record()
    limits: ImageLimits = started.limits
    pictures = pictures_of(got.content)
    assert [hashlib.sha256(p).hexdigest() for p in pictures] == sent.images
    texts = read_texts(got)
    check_delivery([b for b in result["content"] if is_image(b)], pictures, texts, limits)
    budget = ResultLimits.budget(started.result_limits)
    if budget is not None and pictures:
        assert len(got.model_dump_json(by_alias=True, exclude_none=True).encode()) <= budget


@pytest.mark.parametrize(("profile", "client"), PROFILES)
def test_what_a_client_gets_is_what_the_record_says(tmp_path: Path, profile: str,
                                                   client: str) -> None:
    with rig(tmp_path, profile, client) as running:

        @settings(max_examples=25, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(results())
        def holds(result: dict[str, Any]) -> None:
            check(running, result)

        holds()
