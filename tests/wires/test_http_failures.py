"""The HTTP edge under failure, over real loopback HTTP against the simulator's fault injection."""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from fuseforks.core.errors import WireError, WireGarbage, WireRejected, WireUnavailable
from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop
from fuseforks.simulator import Fault, run_simulator
from fuseforks.wires import WIRES, Endpoint
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import snapshot_request, tool_round, two_colour

FAST = RetryPolicy(max_attempts=5, base_delay=0.001, max_delay=0.01)


class Notes:
    def __init__(self) -> None:
        self.retries: list[RetryNotice] = []
        self.stops: list[RetryStop] = []
        self.fallbacks: list[JpegResendNotice] = []

    def client(self, wire: str, url: str, key: str = "test-key",
               policy: RetryPolicy = FAST) -> ProviderClient:
        return ProviderClient(wire, Endpoint(url, key), policy=policy,
                              on_retry=self.retries.append, on_retry_stop=self.stops.append,
                              on_jpeg_resend=self.fallbacks.append)


async def test_429_with_retry_after_is_waited_out_then_succeeds() -> None:
    notes = Notes()
    async with run_simulator(any_model=True) as sim:
        sim.inject(Fault.error(429, retry_after=0.25))
        async with notes.client("openai-responses", sim.base_urls["openai-responses"]) as client:
            started = time.monotonic()
            response = await client.chat(*_request_and_vault())
            elapsed = time.monotonic() - started
    assert response.text.startswith("I see 1 image.")
    assert [r.status for r in sim.received] == [429, 200]
    assert elapsed >= 0.25
    assert notes.retries == [RetryNotice(
        wire="openai-responses", model="sim-vision-1", host="127.0.0.1", attempt=1,
        max_attempts=5, status=429, error_class="rate_limited", code="rate_limit_exceeded",
        delay=0.25)]
    assert notes.stops == []


def _request_and_vault() -> tuple:
    vault = ImageVault()
    return snapshot_request(vault), vault


async def test_500_five_times_gives_a_bounded_clear_final_error() -> None:
    notes = Notes()
    async with run_simulator(any_model=True) as sim:
        sim.inject(*[Fault.error(500)] * 5)
        async with notes.client("anthropic", sim.base_urls["anthropic"]) as client:
            with pytest.raises(WireUnavailable) as caught:
                await client.chat(*_request_and_vault())
    assert [r.status for r in sim.received] == [500] * 5
    assert str(caught.value) == (
        "WireUnavailable: backend=anthropic status=500 class=server_error type=api_error "
        "code=api_error: simulated fault (gave up after 5 attempts)")
    assert [n.attempt for n in notes.retries] == [1, 2, 3, 4]
    assert notes.stops == [RetryStop(
        wire="anthropic", model="sim-vision-1", host="127.0.0.1", attempts=5, status=500,
        error_class="server_error", code="api_error", images_rejected=False)]


async def test_backoff_grows_exponentially_within_jitter() -> None:
    notes = Notes()
    policy = RetryPolicy(max_attempts=4, base_delay=0.02, max_delay=1.0, jitter=0.25)
    async with run_simulator(any_model=True) as sim:
        sim.inject(*[Fault.error(503)] * 3)
        async with notes.client("gemini", sim.base_urls["gemini"], policy=policy) as client:
            await client.chat(*_request_and_vault())
    delays = [n.delay for n in notes.retries]
    for attempt, delay in enumerate(delays, 1):
        nominal = 0.02 * 2 ** (attempt - 1)
        assert nominal * 0.75 <= delay <= nominal * 1.25
    assert [n.error_class for n in notes.retries] == ["server_error"] * 3


async def test_400_is_not_retried_and_is_reported_with_the_provider_code() -> None:
    notes = Notes()
    model = "perplexity/deepseek-v4-pro-0813"
    async with run_simulator() as sim:
        url = sim.base_urls["perplexity-responses"]
        async with notes.client("perplexity-responses", url) as client:
            vault = ImageVault()
            with pytest.raises(WireRejected) as caught:
                await client.chat(snapshot_request(vault, model=model), vault)
            text_only = await client.chat(tool_round([("camera_snapshot", "x", [])], model=model), vault)
    assert caught.value.status == 400 and caught.value.code == "invalid_request"
    assert caught.value.images_rejected is False  # a bare "invalid request" does not name images
    assert [r.status for r in sim.received] == [400, 200]
    assert text_only.text == "I received the tool result; it has no image."
    assert notes.retries == []
    assert notes.stops == [RetryStop(
        wire="perplexity-responses", model=model, host="127.0.0.1", attempts=1, status=400,
        error_class="client_error", code="invalid_request", images_rejected=False)]


async def test_garbage_json_is_a_clear_error_and_not_retried() -> None:
    notes = Notes()
    async with run_simulator(any_model=True) as sim:
        sim.inject(Fault.garbage())
        async with notes.client("openai-compat", sim.base_urls["openai-compat"]) as client:
            with pytest.raises(WireGarbage) as caught:
                await client.chat(*_request_and_vault())
    assert len(sim.received) == 1
    assert str(caught.value).startswith(
        "WireGarbage: backend=openai-compat status=200 class=garbage: "
        "response body is not a openai-compat response (")
    assert [n.error_class for n in notes.stops] == ["garbage"]


async def test_a_dropped_connection_is_retried_then_succeeds() -> None:
    notes = Notes()
    async with run_simulator(any_model=True) as sim:
        sim.inject(Fault.drop())
        async with notes.client("xai-responses", sim.base_urls["xai-responses"]) as client:
            response = await client.chat(*_request_and_vault())
    assert response.stop_reason == "end_turn"
    assert [r.status for r in sim.received] == [None, 200]
    assert [(n.status, n.error_class) for n in notes.retries] == [(None, "connection")]


async def test_connections_dropped_every_time_give_a_clear_final_error() -> None:
    notes = Notes()
    async with run_simulator(any_model=True) as sim:
        sim.inject(*[Fault.drop()] * 3)
        policy = RetryPolicy(max_attempts=3, base_delay=0.001)
        async with notes.client("meta-responses", sim.base_urls["meta-responses"], policy=policy) as client:
            with pytest.raises(WireUnavailable) as caught:
                await client.chat(*_request_and_vault())
    assert caught.value.error_class == "connection" and caught.value.attempts == 3
    assert str(caught.value).startswith("WireUnavailable: backend=meta-responses status=- class=connection")
    assert str(caught.value).endswith("(gave up after 3 attempts)")
    assert notes.stops == [RetryStop(
        wire="meta-responses", model="sim-vision-1", host="127.0.0.1", attempts=3, status=None,
        error_class="connection", code="", images_rejected=False)]


async def test_openai_compat_webp_refused_is_resent_once_as_jpeg() -> None:
    notes = Notes()
    async with (
        run_simulator() as sim,
        notes.client("openai-compat", sim.base_urls["openai-compat"]) as client,
    ):
        vault = ImageVault()
        webp = vault.put(two_colour("WEBP"), "image/webp")
        request = tool_round([("camera_snapshot", "x", [webp])], model="sim-no-webp")
        response = await client.chat(request, vault)
    assert response.text == "I see 1 image. image 1: left half green, right half magenta."
    assert [r.status for r in sim.received] == [400, 200]
    assert b"data:image/jpeg;base64," in sim.received[1].body
    assert b"image/webp" not in sim.received[1].body
    assert notes.fallbacks == [JpegResendNotice(
        wire="openai-compat", model="sim-no-webp", host="127.0.0.1", converted=1)]
    assert notes.stops == []


async def test_openai_compat_second_400_after_jpeg_fallback_is_images_rejected() -> None:
    notes = Notes()
    model = "perplexity/deepseek-v4-pro-0813"
    async with (
        run_simulator() as sim,
        notes.client("openai-compat", sim.base_urls["openai-compat"]) as client,
    ):
        vault = ImageVault()
        webp = vault.put(two_colour("WEBP"), "image/webp")
        with pytest.raises(WireRejected) as caught:
            await client.chat(tool_round([("camera_snapshot", "x", [webp])], model=model), vault)
    assert caught.value.images_rejected is True
    assert [r.status for r in sim.received] == [400, 400]
    assert len(notes.fallbacks) == 1
    assert [(s.status, s.images_rejected) for s in notes.stops] == [(400, True)]


async def test_jpeg_only_request_gets_no_attachment_fallback() -> None:
    notes = Notes()
    async with (
        run_simulator() as sim,
        notes.client("openai-compat", sim.base_urls["openai-compat"]) as client,
    ):
        vault = ImageVault()
        with pytest.raises(WireRejected):
            await client.chat(snapshot_request(vault, model="perplexity/deepseek-v4-pro-0813"), vault)
    assert len(sim.received) == 1 and notes.fallbacks == []


SENTINEL = "sk-SENTINEL-7f3a9c"


@pytest.mark.parametrize("wire", WIRES)
async def test_the_api_key_never_appears_in_errors_notices_or_logs(
    wire: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    notes = Notes()
    texts: list[str] = []
    async with run_simulator(any_model=True) as sim:
        sim.inject(Fault.error(429, retry_after=0), Fault.error(401, echo_key=True))
        async with notes.client(wire, sim.base_urls[wire], key=SENTINEL) as client:
            texts += [repr(client.endpoint), repr(client.wire.encode(*_encode_args(client)))]
            with pytest.raises(WireError) as caught:
                await client.chat(*_request_and_vault())
    texts += [str(caught.value), repr(caught.value), caught.value.message]
    texts += [repr(n) for n in notes.retries] + [repr(n) for n in notes.stops]
    texts += [r.getMessage() for r in caplog.records]
    assert "Incorrect API key provided: [redacted]" in caught.value.message
    assert len(notes.retries) == 1 and len(notes.stops) == 1
    assert not [t for t in texts if SENTINEL in t]


def _encode_args(client: ProviderClient) -> tuple:
    vault = ImageVault()
    return snapshot_request(vault), vault, client.endpoint


async def test_a_read_timeout_is_retried_as_class_timeout() -> None:
    notes = Notes()
    async with run_simulator(any_model=True) as sim:
        sim.inject(Fault.stall(0.5))
        client = ProviderClient(
            "gemini", Endpoint(sim.base_urls["gemini"], "k"), policy=FAST,
            timeout=httpx.Timeout(5.0, read=0.2), on_retry=notes.retries.append)
        async with client:
            response = await client.chat(*_request_and_vault())
    assert response.stop_reason == "end_turn"
    assert [(n.status, n.error_class) for n in notes.retries] == [(None, "timeout")]
