"""The two JetStream streams, their subjects, and how an envelope travels on them.

`FUSEFORKS_EVENTS` holds every recorded event on the subject of its turn
(`fuseforks.events.<turn_id>`), relayed from the store in the store's global order. Each message
carries its `(turn_id, seq)` as the JetStream message id, so the server drops a second copy within
the duplicate window, and every reader drops one by `(turn_id, seq)` anyway: the stream is a
transport, the store is the truth. The store position of the event rides in a header, so a relay
that starts resumes after the last event the stream holds.

`FUSEFORKS_WORK` is a work queue of turn requests (`fuseforks.work`): each is delivered to one
worker and removed when acknowledged, which a worker does only once the turn has ended in the
store.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import socket
from collections.abc import Callable
from typing import Any

import anyio
import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from fuseforks.core.errors import BusError, ConfigError
from fuseforks.events.codec import Envelope, decode_envelope

EVENTS_STREAM = "FUSEFORKS_EVENTS"
EVENTS_SUBJECT = "fuseforks.events"
WORK_STREAM = "FUSEFORKS_WORK"
WORK_SUBJECT = "fuseforks.work"
POSITION_HEADER = "Fuseforks-Position"
LEASE_HEADER = "Fuseforks-Lease"
"""The relay lease a message was published under (its token: `fuseforks.jetstream.lease`)."""
MSG_ID = "Nats-Msg-Id"
DUPLICATE_WINDOW = 600.0
"""Seconds the server remembers message ids: longer than any relay lags behind another."""
RELAY_BUCKET = "FUSEFORKS_RELAY"
"""Key-value bucket holding, per store, the relay's lease and the store position published up to
(kept for good: the events stream forgets its messages after `EVENTS_MAX_AGE`)."""
EVENTS_MAX_AGE = 7 * 24 * 3600.0
"""How long events stay on the stream (the store keeps them for good)."""

CONNECT_TIMEOUT = 5.0
"""Seconds a command waits for a NATS that does not answer before it gives up (a refusal ends
the wait at once; later losses are reconnected)."""

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,200}$")


def check_turn_id(turn_id: str) -> str:
    """A turn id that is one subject token (letters, digits, `_`, `-`)."""
    if not _TOKEN.match(turn_id):
        raise ConfigError(f"turn id {turn_id!r} must be letters, digits, '_' or '-' "
                         "(it names a subject on the message bus)")
    return turn_id


def turn_subject(turn_id: str) -> str:
    """The subject of a turn's events: its id, or (an id that is not one subject token, from an
    older store) a digest of it."""
    token = turn_id if _TOKEN.match(turn_id) else "h-" + hashlib.sha256(turn_id.encode()).hexdigest()
    return f"{EVENTS_SUBJECT}.{token}"


def decode(data: bytes) -> Envelope:
    return decode_envelope(data)


async def connect(url: str, *, name: str = "fuseforks", on_lost: Callable[[], None] | None = None,
                  on_back: Callable[[], None] | None = None, **options: Any) -> Client:
    """A connection that reconnects for ever (a worker outlives a NATS restart); the first
    connection fails with a one-line `BusError`, at once when the address answered (nothing
    listens there, no such host), after `CONNECT_TIMEOUT` when it did not. Once connected,
    `on_lost` is told when the connection drops and `on_back` when it is back: once each per
    outage, however many tries it takes."""
    client: Client | None = None
    answers: list[str] = []

    async def noted(error: Exception) -> None:
        # nats-py retries a refused first connection like a timed-out one: stop at the answer.
        if client is None and (answer := _answer(error)) is not None:
            answers.append(answer)
            scope.cancel()

    async def lost() -> None:
        if on_lost is not None and client is not None and client.is_reconnecting:
            on_lost()  # not when the connection is closed on purpose

    async def back() -> None:
        if on_back is not None:
            on_back()

    with anyio.CancelScope() as scope:
        try:
            # nats-py retries a first connection for ever when reconnecting is allowed: bound it.
            with anyio.fail_after(CONNECT_TIMEOUT):
                client = await nats.connect(
                    url, name=name, max_reconnect_attempts=-1, reconnect_time_wait=0.5,
                    connect_timeout=CONNECT_TIMEOUT, allow_reconnect=True, error_cb=noted,
                    disconnected_cb=lost, reconnected_cb=back, **options)
                return client
        except TimeoutError:
            raise BusError(f"cannot reach NATS at {redact_bus_url(url)} "
                           f"(no answer in {CONNECT_TIMEOUT:g} s)") from None
        except Exception as error:  # nats raises several unrelated types for "cannot connect"
            detail = str(error)
            for secret in _secrets(url):
                detail = detail.replace(secret, "***")
            raise BusError(f"cannot reach NATS at {redact_bus_url(url)}: "
                           f"{type(error).__name__}: {detail}") from None
    raise BusError(f"cannot reach NATS at {redact_bus_url(url)}: {answers[0]}")


def _answer(error: Exception) -> str | None:
    """What the address said to a first connection, when it said it at once: nothing listens
    there, there is no such host, no route to it. None when only waiting can tell (a timeout, a
    server that took the connection and has yet to answer it)."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"{error.strerror or error}".lower()
    if isinstance(error, OSError) and error.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
        return os.strerror(error.errno).lower()
    return None


def redact_bus_url(url: str) -> str:
    """`url` as every message shows it: a password (`user:password@`) or a token (`token@`)
    as `***`."""
    scheme, separator, rest = url.partition("://")
    login, at, hosts = rest.rpartition("@")
    if not separator or not at:
        return url
    user, colon, _ = login.partition(":")
    return f"{scheme}://{user + ':***' if colon else '***'}@{hosts}"


def _secrets(url: str) -> list[str]:
    login = url.partition("://")[2].rpartition("@")[0]
    user, colon, password = login.partition(":")
    return [s for s in ([password] if colon else [user]) if len(s) >= 3]


async def ensure_streams(js: JetStreamContext) -> None:
    """Create the streams if they do not exist (idempotent: every process may call it)."""
    wanted = [
        StreamConfig(name=EVENTS_STREAM, subjects=[f"{EVENTS_SUBJECT}.*"],
                     retention=RetentionPolicy.LIMITS, storage=StorageType.FILE,
                     duplicate_window=DUPLICATE_WINDOW, max_age=EVENTS_MAX_AGE),
        StreamConfig(name=WORK_STREAM, subjects=[WORK_SUBJECT],
                     retention=RetentionPolicy.WORK_QUEUE, storage=StorageType.FILE,
                     duplicate_window=DUPLICATE_WINDOW),
    ]
    for config in wanted:
        try:
            await js.stream_info(config.name or "")
        except NotFoundError:
            await js.add_stream(config)
    try:
        await js.key_value(RELAY_BUCKET)
    except NotFoundError:
        await js.create_key_value(KeyValueConfig(bucket=RELAY_BUCKET, history=1,
                                                 storage=StorageType.FILE))


def position_header(tx: int, position: int) -> str:
    return f"{tx}.{position}"


def parse_position(value: str) -> tuple[int, int]:
    tx, _, position = value.partition(".")
    return int(tx), int(position)
