"""The HTTP edge: one `httpx.AsyncClient` per provider, retries, and error mapping.

429, 5xx, 408 and transport failures are retried with exponential backoff and jitter, honouring
`Retry-After` (seconds, HTTP date, or `retry-after-ms`), for a bounded number of attempts. Other
4xx are never retried here: the turn layer decides (the image fallback). Every give-up — retries
exhausted, a refusal, a garbled body — is reported once through `on_retry_stop` before it is
raised, every retry through `on_retry`. The API key is scrubbed from anything a provider echoes
back.

A call given `on_text` streams (`Wire.streaming`): the answer's text goes to `on_text` as it
arrives and the call returns the same `ChatResponse` a whole answer gives. A status that is not
2xx is read and classified as without streaming; a stream cut short (`stream_cut`) or an error
event worth retrying (`stream_error`) is retried like a transport error, from the start: the
`on_retry` notice tells a listener that the text it heard is void and the answer starts again.

A cloud's credential (`Endpoint.credential`: Signature Version 4, a Google or Entra ID token)
authorizes each attempt here, at the edge, never in the pure wire; whatever it hands out is
scrubbed like the key. A wire whose provider names an error's type in a header
(`Wire.error_body`: Bedrock) has it folded into the body before the body is classified.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Self

import anyio
import httpx

from fuseforks.core.backoff import Backoff
from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.errors import (
    WireError,
    WireGarbage,
    WireRejected,
    WireRetryable,
    WireUnavailable,
)
from fuseforks.core.names import RefusalKind, WireName
from fuseforks.images.jpeg_fallback import has_webp, with_jpeg_images
from fuseforks.images.vault import ImageVault
from fuseforks.ports.notices import JpegResendNotice, RetryNotice, RetryStop
from fuseforks.wires.base import Endpoint, HttpRequest, Wire
from fuseforks.wires.registry import get_wire, resolve_endpoint
from fuseforks.wires.streaming import STREAM_CUT, is_framed_as, read_events, read_eventstream

REDACTED = "[redacted]"
# The first refusals the openai-compat JPEG resend answers: one about the images' format, or a
# bare 400 (endpoints that take no WebP rarely say so). A parameter or placement refusal is not
# about the format, so converting would not help.
_MAY_BE_WEBP: frozenset[RefusalKind] = frozenset({"image", "other"})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff (a `Backoff` with these numbers), or the provider's
    `Retry-After`. Tests shrink the delays; the defaults suit real providers."""

    max_attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25  # each delay is scaled by a factor in [1 - jitter, 1 + jitter]
    max_retry_after: float = 60.0

    @property
    def backoff(self) -> Backoff:
        return Backoff(base=self.base_delay, cap=self.max_delay, jitter=self.jitter,
                       attempts=self.max_attempts)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds before the try after `attempt` failed ones: the provider's `Retry-After`
        (at most `max_retry_after`), else the backoff's jittered delay."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return self.backoff.delay(attempt, rng)


DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=300.0, write=60.0, pool=10.0)


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


class ProviderClient:
    """Sends canonical requests on one wire; use as an async context manager."""

    def __init__(
        self,
        wire: WireName | Wire,
        endpoint: Endpoint | None = None,
        *,
        policy: RetryPolicy = RetryPolicy(),
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        on_retry: Callable[[RetryNotice], None] | None = None,
        on_retry_stop: Callable[[RetryStop], None] | None = None,
        on_jpeg_resend: Callable[[JpegResendNotice], None] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.wire = get_wire(wire) if isinstance(wire, str) else wire
        self.endpoint = endpoint or resolve_endpoint(self.wire.name)
        self.policy = policy
        self._on_retry = on_retry
        self._on_retry_stop = on_retry_stop
        self._on_jpeg_resend = on_jpeg_resend
        self._rng = rng or random.Random()
        self._http = httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=False)
        self.host = httpx.URL(self.endpoint.base_url).host

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def chat(self, request: ChatRequest, vault: ImageVault,
                   on_text: Callable[[str], None] | None = None) -> ChatResponse:
        """One model call with retries; raises a `WireError` subclass on failure. With
        `on_text`, the call streams and each piece of the answer's text goes to it as it
        arrives (after an `on_retry` notice, from the start again)."""
        try:
            return await self._attempts(request, vault, on_text)
        except WireRejected as first:
            if (not self.wire.jpeg_resend or first.status != 400
                    or first.refusal not in _MAY_BE_WEBP or not has_webp(request)):
                self._stop(request, first, attempts=first.attempts)
                raise
            try:
                jpeg_request, converted = await anyio.to_thread.run_sync(
                    with_jpeg_images, request, vault)
            except (OSError, ValueError):  # a WebP Pillow cannot decode: nothing to resend
                first.refusal = "image"
                self._stop(request, first, attempts=first.attempts)
                raise first from None
        if self._on_jpeg_resend:
            self._on_jpeg_resend(JpegResendNotice(
                wire=self.wire.name, model=request.model, host=self.host, converted=converted))
        try:
            return await self._attempts(jpeg_request, vault, on_text)
        except WireRejected as second:
            if second.status == 400 and second.refusal == "other":
                second.refusal = "image"  # JPEG refused too: an unexplained 400 is the images'
            self._stop(request, second, attempts=second.attempts)
            raise

    async def _attempts(self, request: ChatRequest, vault: ImageVault,
                        on_text: Callable[[str], None] | None) -> ChatResponse:
        streaming = self.wire.streaming if on_text is not None else None
        encode = streaming.encode if streaming is not None else self.wire.encode
        http_request = encode(request, vault, self.endpoint)
        attempt = 0
        while True:
            attempt += 1
            try:
                headers = await self._authorized(http_request)
                if on_text is not None:
                    return await self._stream_once(http_request.url, headers,
                                                   http_request.body, on_text)
                return await self._send_once(http_request.url, headers, http_request.body)
            except WireRetryable as error:
                if not self.policy.backoff.allows(attempt):
                    final = WireUnavailable(
                        attempts=attempt, wire=error.wire, status=error.status,
                        error_class=error.error_class, error_type=error.error_type,
                        code=error.code, message=error.message,
                    )
                    self._stop(request, final, attempts=attempt)
                    raise final from None
                delay = self.policy.delay(attempt, error.retry_after, self._rng)
                if self._on_retry:
                    self._on_retry(RetryNotice(
                        wire=self.wire.name, model=request.model, host=self.host,
                        attempt=attempt, max_attempts=self.policy.max_attempts,
                        status=error.status, error_class=error.error_class, code=error.code,
                        delay=delay,
                    ))
                await anyio.sleep(delay)
            except (WireGarbage, WireUnavailable) as error:  # a garbled body, no credentials
                self._stop(request, error, attempts=attempt if isinstance(error, WireGarbage)
                           else 0)
                raise
            except WireRejected as error:
                error.attempts = attempt
                raise

    async def _authorized(self, request: HttpRequest) -> dict[str, str]:
        """The request's headers, signed by the endpoint's cloud credential when it has one
        (each attempt anew: a signature is dated, a token expires). A credential that cannot
        be had (no token endpoint, an expired login) fails the call without a retry."""
        credential = self.endpoint.credential
        if credential is None:
            return request.headers
        try:
            return {**request.headers, **await credential.headers(request)}
        except Exception as exc:  # the cloud library's own errors, whatever their class
            raise WireUnavailable(
                attempts=0, wire=self.wire.name, status=None, error_class="credentials",
                message=self._scrub_text(f"the {self.wire.name} credentials could not sign "
                                         f"the request: {type(exc).__name__}: {exc}")) from None

    def _secrets(self) -> list[str]:
        """The key and whatever the credential has handed out: never echoed back."""
        found = [self.endpoint.api_key] if self.endpoint.api_key else []
        if self.endpoint.credential is not None:
            found += self.endpoint.credential.secrets()
        return [secret for secret in found if secret]

    def _scrub(self, data: bytes) -> bytes:
        for secret in self._secrets():
            data = data.replace(secret.encode(), REDACTED.encode())
        return data

    def _scrub_text(self, text: str) -> str:
        for secret in self._secrets():
            text = text.replace(secret, REDACTED)
        return text

    def _classified(self, response: httpx.Response, content: bytes) -> WireError:
        """A status that is not 2xx, as the wire reads it (its headers folded into the body
        where the provider names the error there)."""
        if self.wire.error_body is not None:
            content = self.wire.error_body(response.headers, content)
        error = self.wire.classify(response.status_code, self._scrub(content))
        if isinstance(error, WireRetryable):
            error.retry_after = retry_after_seconds(response.headers)
        return error

    async def _send_once(self, url: str, headers: dict[str, str], body: bytes) -> ChatResponse:
        try:
            response = await self._http.post(url, headers=headers, content=body)
        except httpx.TimeoutException as exc:
            raise WireRetryable(wire=self.wire.name, status=None, error_class="timeout",
                                message=self._scrub_text(f"{type(exc).__name__}: {exc}")) from None
        except httpx.TransportError as exc:
            raise WireRetryable(wire=self.wire.name, status=None, error_class="connection",
                                message=self._scrub_text(f"{type(exc).__name__}: {exc}")) from None
        if response.is_success:
            return self._decoded(response.status_code, response.content)
        raise self._classified(response, response.content)

    async def _stream_once(self, url: str, headers: dict[str, str], body: bytes,
                           on_text: Callable[[str], None]) -> ChatResponse:
        """One streamed attempt. Before the answer starts, failures are what they are without
        streaming; once it has started, a transport failure is a `stream_cut`."""
        streaming = self.wire.streaming
        started: int | None = None  # the status of the answer once it has started
        try:
            async with self._http.stream("POST", url, headers=headers, content=body) as response:
                if not response.is_success:
                    raise self._classified(response, await response.aread())
                started = response.status_code
                if streaming is None or not is_framed_as(response, streaming.framing):
                    # a wire that cannot stream, or a server that ignored `stream`: one piece
                    whole = self._decoded(response.status_code, await response.aread())
                    if whole.text:
                        on_text(whole.text)
                    return whole
                if streaming.framing == "eventstream":
                    return await read_eventstream(response, streaming.accumulator(), on_text)
                return await read_events(response, streaming.accumulator(), on_text)
        except httpx.TimeoutException as exc:
            raise WireRetryable(wire=self.wire.name, status=None,
                                error_class=STREAM_CUT if started else "timeout",
                                message=self._scrub_text(f"{type(exc).__name__}: {exc}")) from None
        except httpx.TransportError as exc:
            raise WireRetryable(wire=self.wire.name, status=None,
                                error_class=STREAM_CUT if started else "connection",
                                message=self._scrub_text(f"{type(exc).__name__}: {exc}")) from None
        except WireGarbage as exc:  # a frame that is not the wire's: garbage of a 2xx, as whole
            raise WireGarbage(wire=self.wire.name, status=exc.status or started,
                              error_class="garbage", message=self._scrub_text(exc.message)) from None
        except WireError as error:
            raise self._scrubbed(error) from None

    def _decoded(self, status: int, content: bytes) -> ChatResponse:
        try:
            return self.wire.decode(content)
        except WireGarbage as exc:
            raise WireGarbage(wire=self.wire.name, status=status, error_class="garbage",
                              message=self._scrub_text(exc.message)) from None

    def _scrubbed(self, error: WireError) -> WireError:
        """`error` with the key taken out of every text it carries (an error event may quote
        it, as some providers' error bodies do)."""
        texts = (error.error_type, error.code, error.message)
        if not any(secret in text for secret in self._secrets() for text in texts):
            return error
        fields: dict[str, Any] = {
            "wire": error.wire, "status": error.status, "error_class": error.error_class,
            "error_type": self._scrub_text(error.error_type), "code": self._scrub_text(error.code),
            "message": self._scrub_text(error.message)}
        if isinstance(error, WireRetryable):
            return WireRetryable(retry_after=error.retry_after, **fields)
        if isinstance(error, WireRejected):
            return WireRejected(refusal=error.refusal, **fields)
        return type(error)(**fields)

    def _stop(self, request: ChatRequest, error: WireError, *, attempts: int) -> None:
        if self._on_retry_stop:
            self._on_retry_stop(RetryStop(
                wire=self.wire.name, model=request.model, host=self.host, attempts=attempts,
                status=error.status, error_class=error.error_class, code=error.code,
                images_rejected=isinstance(error, WireRejected) and error.images_rejected,
            ))
