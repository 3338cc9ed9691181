"""AWS's event-stream framing (`application/vnd.amazon.eventstream`), pure: bytes in, messages out.

Bedrock's `ConverseStream` answers with binary messages, not server-sent events. Each message is
a prelude (total length, headers length: two big-endian uint32), the prelude's CRC32, the headers
(each a one-byte name length, the name, a one-byte value type, the value), the payload, and the
CRC32 of everything before it. botocore parses this framing inside its response parser, not
through a documented interface, so it is read here in a few lines and checked against what the
official client makes of the same bytes (`tests/wires/test_eventstream.py`, and boto3's
`converse_stream` reading the simulator's frames). `encode` writes a message: the simulator
speaks Bedrock with it.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field

CONTENT_TYPE = "application/vnd.amazon.eventstream"
PRELUDE = struct.Struct(">II")
CRC = struct.Struct(">I")
MIN_MESSAGE = PRELUDE.size + 2 * CRC.size  # no headers, no payload: 16 bytes
MAX_MESSAGE = 16 * 1024 * 1024
MAX_HEADERS = 128 * 1024

HeaderValue = bool | int | bytes | str | uuid.UUID
_INTEGERS = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}  # 8: a timestamp, milliseconds


class FramingError(ValueError):
    """Bytes that are not event-stream messages: a bad length, a CRC that does not match."""


@dataclass(frozen=True, slots=True)
class Message:
    """One event-stream message: its headers (`:message-type`, `:event-type`, …) and payload."""

    headers: dict[str, HeaderValue] = field(default_factory=dict)
    payload: bytes = b""

    def text(self, name: str) -> str:
        value = self.headers.get(name, "")
        return value if isinstance(value, str) else ""


def _crc(data: bytes | memoryview, start: int = 0) -> int:
    return zlib.crc32(data, start) & 0xFFFFFFFF


def _headers(data: memoryview) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    at = 0
    try:
        while at < len(data):
            size = data[at]
            name = bytes(data[at + 1:at + 1 + size]).decode()
            at += 1 + size
            kind = data[at]
            at += 1
            value: HeaderValue
            if kind in (0, 1):
                value = kind == 0
            elif kind in _INTEGERS:
                (value,) = struct.unpack_from(_INTEGERS[kind], data, at)
                at += struct.calcsize(_INTEGERS[kind])
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", data, at)
                raw = bytes(data[at + 2:at + 2 + length])
                if len(raw) != length:
                    raise FramingError("a header value runs past the headers")
                value = raw.decode() if kind == 7 else raw
                at += 2 + length
            elif kind == 9:
                value = uuid.UUID(bytes=bytes(data[at:at + 16]))
                at += 16
            else:
                raise FramingError(f"header {name!r} has an unknown value type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, FramingError):
            raise
        raise FramingError(f"the headers cannot be read ({exc})") from None
    if at != len(data):
        raise FramingError("a header runs past the headers")
    return headers


class Decoder:
    """Messages out of a byte stream fed in pieces of any size (a network read ends anywhere)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Message]:
        self._buffer += data
        messages = []
        while len(self._buffer) >= PRELUDE.size + CRC.size:
            total, headers_length = PRELUDE.unpack_from(self._buffer)
            (prelude_crc,) = CRC.unpack_from(self._buffer, PRELUDE.size)
            if _crc(bytes(self._buffer[:PRELUDE.size])) != prelude_crc:
                raise FramingError("the prelude's CRC does not match")
            if not MIN_MESSAGE <= total <= MAX_MESSAGE or headers_length > min(
                    MAX_HEADERS, total - MIN_MESSAGE):
                raise FramingError(f"a message of {total} bytes with {headers_length} bytes of "
                                   "headers")
            if len(self._buffer) < total:
                break
            frame = memoryview(bytes(self._buffer[:total]))
            del self._buffer[:total]
            (message_crc,) = CRC.unpack_from(frame, total - CRC.size)
            if _crc(frame[:total - CRC.size]) != message_crc:
                raise FramingError("the message's CRC does not match")
            start = PRELUDE.size + CRC.size
            messages.append(Message(
                headers=_headers(frame[start:start + headers_length]),
                payload=bytes(frame[start + headers_length:total - CRC.size])))
        return messages

    @property
    def pending(self) -> int:
        """Bytes of a message begun and not finished: a stream that ends here was cut."""
        return len(self._buffer)


def _header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode()
    out = bytes([len(raw_name)]) + raw_name
    if isinstance(value, bool):
        return out + bytes([0 if value else 1])
    if isinstance(value, int):
        return out + bytes([5]) + struct.pack(">q", value)
    if isinstance(value, uuid.UUID):
        return out + bytes([9]) + value.bytes
    raw = value.encode() if isinstance(value, str) else value
    return out + bytes([7 if isinstance(value, str) else 6]) + struct.pack(">H", len(raw)) + raw


def encode(message: Message) -> bytes:
    """The message's bytes (integers as 64-bit values)."""
    headers = b"".join(_header(name, value) for name, value in message.headers.items())
    total = MIN_MESSAGE + len(headers) + len(message.payload)
    prelude = PRELUDE.pack(total, len(headers))
    head = prelude + CRC.pack(_crc(prelude)) + headers + message.payload
    return head + CRC.pack(_crc(head))


def event(event_type: str, payload: bytes) -> Message:
    """An event message, as Bedrock sends each part of a streamed answer."""
    return Message({":event-type": event_type, ":content-type": "application/json",
                    ":message-type": "event"}, payload)


def exception(exception_type: str, payload: bytes) -> Message:
    """An exception message, as Bedrock sends an error once the stream has begun."""
    return Message({":exception-type": exception_type, ":content-type": "application/json",
                    ":message-type": "exception"}, payload)
