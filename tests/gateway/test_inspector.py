"""The MCP Inspector's CLI (npm) as the gateway's client, over stdio and HTTP, with
server-everything and the screenshot server behind the gateway."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import signal
from pathlib import Path
from typing import Any

from PIL import Image

from fuseforks.events.types import ResultSent, SessionStarted
from tests.gateway.conftest import (
    REPO,
    gateway_command,
    http_gateway,
    recorded,
    shots,
    write_config,
)
from tests.helpers import npm, processes


def inspect(target: list[str], *method: str) -> dict[str, Any]:
    """Run the Inspector's CLI once against `target` (a command, or a URL) and read its JSON."""
    command = [*npm.inspector(), *method, "--", *target]
    if target[0].startswith("http"):
        command = [*npm.inspector(), target[0], *method]
    result = processes.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def images(result: dict[str, Any]) -> list[bytes]:
    return [base64.b64decode(block["data"]) for block in result["content"]
            if block["type"] == "image"]


def long_edge(data: bytes) -> int:
    with Image.open(io.BytesIO(data)) as opened:
        return max(opened.size)


def test_the_inspector_over_stdio_lists_and_calls_through_the_gateway(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, everything=npm.everything(), shots=shots())
    db = tmp_path / "g.db"
    gateway = gateway_command(config, "--db", str(db), "--profile", "claude-desktop")
    listed = inspect(gateway, "--method", "tools/list")
    tiny = inspect(gateway, "--method", "tools/call", "--tool-name",
                   "everything__get-tiny-image")
    retina = inspect(gateway, "--method", "tools/call", "--tool-name", "shots__retina")
    names = [tool["name"] for tool in listed["tools"]]
    assert {"everything__echo", "everything__get-tiny-image", "shots__screen",
            "shots__retina"} <= set(names)
    [tiny_image] = images(tiny)
    # its PNG has an alpha channel, so it is re-encoded; a graphic of few colours: lossless WebP
    assert (tiny_image[:4], tiny_image[8:12]) == (b"RIFF", b"WEBP")
    [retina_image] = images(retina)
    assert long_edge(retina_image) == 1568
    assert len(json.dumps(retina).encode()) <= 1_000_000
    sessions = recorded(db)
    assert len(sessions) == 3  # one run of the CLI, one session
    clients = {(s[0].event.client, s[0].event.profile) for s in sessions
               if isinstance(s[0].event, SessionStarted)}
    assert [name for name, _ in clients] == ["inspector-cli"]
    sent = [d for s in sessions for e in s if isinstance(e.event, ResultSent)
            for d in e.event.images]
    assert sent == [hashlib.sha256(tiny_image).hexdigest(),
                    hashlib.sha256(retina_image).hexdigest()]


def test_the_inspector_over_http_calls_through_the_gateway(tmp_path: Path) -> None:
    config = write_config(tmp_path, everything=npm.everything(), shots=shots())
    db = tmp_path / "g.db"
    with http_gateway(config, "--db", str(db), "--profile", "many-images") as gateway:
        screen = inspect([gateway.url], "--method", "tools/call", "--tool-name",
                         "shots__screen")
        echo = inspect([gateway.url], "--method", "tools/call", "--tool-name",
                       "everything__echo", "--tool-arg", "message=through the gateway")
        assert gateway.stop(signal.SIGTERM) == 143
    [image] = images(screen)
    assert long_edge(image) == 2000
    assert echo["content"] == [{"type": "text", "text": "Echo: through the gateway"}]
    sent = [d for s in recorded(db) for e in s if isinstance(e.event, ResultSent)
            for d in e.event.images]
    assert sent == [hashlib.sha256(image).hexdigest()]
