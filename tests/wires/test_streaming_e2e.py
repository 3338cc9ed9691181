"""The HTTP edge streaming over real loopback HTTP against the simulator: every wire, the
openai-compat JPEG resend, and a stream the simulator cuts."""

from __future__ import annotations

import msgspec
import pytest

from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import JpegResendNotice, RetryNotice
from fuseforks.simulator import Fault, run_simulator
from fuseforks.wires import WIRES, Endpoint
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import snapshot_request, tool_round, two_colour

FAST = RetryPolicy(max_attempts=5, base_delay=0.001, max_delay=0.01)
SEEN = "I see 1 image. image 1: left half green, right half magenta."


@pytest.mark.parametrize("wire", WIRES)
async def test_every_wire_streams_the_same_response_it_answers_whole(wire: str) -> None:
    answers = []
    for stream in (False, True):
        deltas: list[str] = []
        async with (
            run_simulator(any_model=True) as sim,
            ProviderClient(wire, Endpoint(sim.base_urls[wire], "k")) as client,
        ):
            vault = ImageVault()
            response = await client.chat(snapshot_request(vault), vault,
                                         on_text=deltas.append if stream else None)
        answers.append(response)
    whole, streamed = answers
    assert streamed == whole
    assert streamed.text == SEEN
    assert "".join(deltas) == SEEN and len(deltas) >= 3


async def test_the_jpeg_resend_streams_too() -> None:
    retries: list[RetryNotice] = []
    resends: list[JpegResendNotice] = []
    deltas: list[str] = []
    async with run_simulator() as sim:
        url = sim.base_urls["openai-compat"]
        async with ProviderClient("openai-compat", Endpoint(url, "k"), policy=FAST,
                                  on_retry=retries.append, on_jpeg_resend=resends.append) as client:
            vault = ImageVault()
            webp = vault.put(two_colour("WEBP"), "image/webp")
            request = tool_round([("camera_snapshot", "x", [webp])], model="sim-no-webp")
            response = await client.chat(request, vault, on_text=deltas.append)
    assert response.text == SEEN and "".join(deltas) == SEEN
    assert [r.status for r in sim.received] == [400, 200]
    first, second = (msgspec.json.decode(r.body) for r in sim.received)
    assert first["stream"] is second["stream"] is True
    assert b"data:image/jpeg;base64," in sim.received[1].body
    assert resends == [JpegResendNotice(wire="openai-compat", model="sim-no-webp",
                                        host="127.0.0.1", converted=1)]
    assert retries == []


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_the_simulator_cuts_is_retried_from_the_start(wire: str) -> None:
    retries: list[RetryNotice] = []
    deltas: list[str] = []
    async with run_simulator(any_model=True) as sim:
        sim.inject(Fault.cut(wire=wire))
        async with ProviderClient(wire, Endpoint(sim.base_urls[wire], "k"), policy=FAST,
                                  on_retry=retries.append) as client:
            vault = ImageVault()
            response = await client.chat(snapshot_request(vault), vault, on_text=deltas.append)
    assert response.text == SEEN
    assert [(n.attempt, n.status, n.error_class) for n in retries] == [(1, None, "stream_cut")]
    heard = "".join(deltas)
    assert heard.endswith(SEEN) and heard != SEEN  # part of it, then all of it
    assert SEEN.startswith(heard.removesuffix(SEEN))
    assert len(sim.received) == 2
