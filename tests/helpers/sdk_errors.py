"""How an official client reports a fault of the simulator, asserted as the client documents it.

A test that drives an SDK client against the simulator shows that the client sees our fault the
way it would see the real service's. What the real service causes is the assertion: the client
reports a connection error (not a timeout) whose text, or its cause's, says the body was
incomplete. Which class carries that report is the SDK's business and has changed between its
releases (anthropic 2.15 let the transport's error through, 2.17 wraps it in its documented
`APIConnectionError`), so every documented form is accepted.
"""

from __future__ import annotations

import httpx
import httpx2

TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError, httpx2.TransportError)
TIMEOUTS: tuple[type[BaseException], ...] = (httpx.TimeoutException, httpx2.TimeoutException)


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def assert_cut_stream(error: BaseException, *, connection_error: tuple[type[BaseException], ...],
                      timeout_error: tuple[type[BaseException], ...] = ()) -> None:
    """`error` reports a body cut short: the SDK's connection error or the transport's own, not a
    timeout, and the text of it or of its cause says the body was incomplete."""
    assert isinstance(error, connection_error + TRANSPORT_ERRORS), repr(error)
    assert not isinstance(error, timeout_error + TIMEOUTS), repr(error)
    texts = [str(e) for e in _chain(error)]
    assert any("incomplete" in text for text in texts), texts
