"""The simulator as tools use it: recording, fault control over HTTP, the CLI as a subprocess,
its eyes, and its script."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import msgspec
import pytest
from PIL import Image

from fuseforks.core.canonical import ChatRequest, UserMessage
from fuseforks.images.vault import ImageVault
from fuseforks.simulator import Script, run_simulator
from fuseforks.simulator.eyes import describe
from fuseforks.wires import WIRES, Endpoint, get_wire
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.helpers import processes
from tests.wires.helpers import MODEL_OF, TOOLS, snapshot_request, two_colour


async def test_record_requests_writes_every_body_as_seq_dash_wire_json(tmp_path: Path) -> None:
    bodies: list[bytes] = []
    async with run_simulator(record_dir=tmp_path / "rec") as sim:
        for wire in WIRES:
            vault = ImageVault()
            async with ProviderClient(wire, Endpoint(sim.base_urls[wire], "k")) as client:
                await client.chat(snapshot_request(vault, model=MODEL_OF[wire]), vault)
            bodies.append(sim.received[-1].body)
    files = sorted((tmp_path / "rec").iterdir())
    assert [f.name for f in files] == [f"{n:04d}-{w}.json" for n, w in enumerate(WIRES, 1)]
    assert [f.read_bytes() for f in files] == bodies


async def test_faults_can_be_queued_over_http() -> None:
    async with (
        run_simulator() as sim,
        httpx.AsyncClient() as http,
    ):
        queued = await http.post(f"{sim.base_url}/_sim/faults",
                                 content=b'[{"kind":"status","status":503,"wire":"gemini"}]')
        assert queued.status_code == 200
        statuses: list[int | None] = []
        policy = RetryPolicy(base_delay=0.001)
        async with ProviderClient("gemini", Endpoint(sim.base_urls["gemini"], "k"), policy=policy,
                                  on_retry=lambda n: statuses.append(n.status)) as client:
            vault = ImageVault()
            await client.chat(snapshot_request(vault, model=MODEL_OF["gemini"]), vault)
    assert statuses == [503]


async def test_a_held_request_is_answered_once_released_over_http() -> None:
    async with (
        run_simulator() as sim,
        httpx.AsyncClient() as http,
        ProviderClient("anthropic", Endpoint(sim.base_urls["anthropic"], "k")) as client,
    ):
        await http.post(f"{sim.base_url}/_sim/faults", content=b'[{"kind":"hold"}]')
        vault = ImageVault()
        answers: list[str] = []

        async def ask() -> None:
            request = snapshot_request(vault, model=MODEL_OF["anthropic"])
            answers.append((await client.chat(request, vault)).text)

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            while not sim.received:  # noqa: ASYNC110 - the request has arrived and waits
                await anyio.sleep(0.01)
            assert answers == []
            released = await http.post(f"{sim.base_url}/_sim/release")
            assert released.json() == {"released": True}
    assert [r.status for r in sim.received] == [200]
    assert answers[0].startswith("I see 1 image.")


async def test_script_calls_named_tools_for_the_given_rounds() -> None:
    script = Script(call_tools=("camera_status",), rounds=2)
    async with (
        run_simulator(script=script) as sim,
        ProviderClient("anthropic", Endpoint(sim.base_urls["anthropic"], "k")) as client,
    ):
        request = ChatRequest(model=MODEL_OF["anthropic"], messages=[UserMessage(text="hi")],
                              tools=TOOLS)
        first = await client.chat(request, ImageVault())
    assert [c.name for c in first.tool_calls] == ["camera_status"]


def test_cli_serves_as_a_real_subprocess(tmp_path: Path) -> None:
    process = processes.spawn(
        [str(Path(sys.executable).with_name("fuseforks")), "simulator", "--port", "0",
         "--record-requests", str(tmp_path)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        assert first.startswith("simulator: listening on http://127.0.0.1:")
        base = first.removeprefix("simulator: listening on ")
        vault = ImageVault()
        http = get_wire("openai-responses").encode(
            snapshot_request(vault, model=MODEL_OF["openai-responses"]), vault,
            Endpoint(f"{base}/openai/v1", "k"))
        response = httpx.post(http.url, headers=http.headers, content=http.body, timeout=10)
        assert response.status_code == 200
        text = msgspec.json.decode(response.content)["output"][0]["content"][0]["text"]
        assert text == "I see 1 image. image 1: left half green, right half magenta."
        assert [p.name for p in tmp_path.iterdir()] == ["0001-openai-responses.json"]
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(("left", "right", "expected"), [
    ((0, 255, 0), (255, 0, 255), "left half green, right half magenta"),
    ((255, 0, 0), (0, 0, 255), "left half red, right half blue"),
    ((255, 255, 0), (255, 255, 0), "solid yellow"),
])
def test_eyes_name_the_half_colours(left: tuple, right: tuple, expected: str) -> None:
    assert describe(two_colour("PNG", left, right)) == expected


def test_eyes_call_non_images_unreadable() -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, "BMP")
    assert describe(b"not an image") == "unreadable"
    assert describe(buffer.getvalue()) == "solid black"
