"""AWS's event-stream framing, read in pieces of any size, and refused when it is not whole.

The official client is the outside check: boto3's `converse_stream` reads the frames this module
writes (the simulator's) in tests/simulator/test_cloud_clients.py, and here a frame whose bytes
are written out by hand from the format's description decodes to what it says.
"""

from __future__ import annotations

import struct
import uuid
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseforks.wires import eventstream
from fuseforks.wires.eventstream import Decoder, FramingError, Message

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=20).filter(lambda n: len(n.encode()) < 256)
values = st.one_of(st.booleans(), st.integers(-(2**63), 2**63 - 1), st.binary(max_size=64),
                   st.text(max_size=64), st.uuids())
messages = st.builds(Message, st.dictionaries(names, values, max_size=6), st.binary(max_size=2048))


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@given(st.lists(messages, max_size=5), st.lists(st.integers(min_value=0), max_size=12))
def test_every_message_comes_back_whole_however_the_bytes_are_cut(
        sent: list[Message], cuts: list[int]) -> None:
    data = b"".join(eventstream.encode(m) for m in sent)
    decoder = Decoder()
    received = [m for piece in _split(data, cuts) for m in decoder.feed(piece)]
    assert received == sent
    assert decoder.pending == 0


@given(messages, st.integers(min_value=0), st.integers(min_value=1, max_value=255))
def test_a_changed_byte_is_never_read_as_a_message(message: Message, at: int, flip: int) -> None:
    data = bytearray(eventstream.encode(message))
    data[at % len(data)] ^= flip
    decoder = Decoder()
    try:
        received = decoder.feed(bytes(data))
    except FramingError:
        return
    assert received == [] and decoder.pending > 0  # a longer length: it waits for more, whole


def test_a_message_cut_short_stays_pending() -> None:
    data = eventstream.encode(eventstream.event("messageStop", b'{"stopReason":"end_turn"}'))
    decoder = Decoder()
    assert decoder.feed(data[:-1]) == []
    assert decoder.pending == len(data) - 1


def test_a_frame_written_by_hand_from_the_format_decodes_to_what_it_says() -> None:
    """Prelude (total, headers length), its CRC32, a string header, a payload, the CRC32 of all
    before it — big-endian, as the format describes, without the module's encoder."""
    header = b"\x0b:event-type" + b"\x07" + struct.pack(">H", 12) + b"messageStart"
    payload = b'{"role":"assistant"}'
    total = 12 + len(header) + len(payload) + 4
    prelude = struct.pack(">II", total, len(header))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + header + payload
    frame = head + struct.pack(">I", zlib.crc32(head))
    (message,) = Decoder().feed(frame)
    assert message == Message({":event-type": "messageStart"}, payload)
    assert message.text(":event-type") == "messageStart"


def test_every_header_type_is_read() -> None:
    u = uuid.UUID("0f0f0f0f-0000-4000-8000-000000000000")
    raw = (b"\x01t\x00" + b"\x01f\x01" + b"\x01b\x02\xff" + b"\x01s\x03\x00\x07"
           + b"\x01i\x04\x00\x00\x01\x00" + b"\x01l\x05" + struct.pack(">q", -5)
           + b"\x01y\x06\x00\x02ab" + b"\x01c\x07\x00\x02hi" + b"\x01d\x08" + struct.pack(">q", 9)
           + b"\x01u\x09" + u.bytes)
    prelude = struct.pack(">II", 16 + len(raw), len(raw))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw
    (message,) = Decoder().feed(head + struct.pack(">I", zlib.crc32(head)))
    assert message.headers == {"t": True, "f": False, "b": -1, "s": 7, "i": 256, "l": -5,
                               "y": b"ab", "c": "hi", "d": 9, "u": u}


@pytest.mark.parametrize("total", [15, 16 * 1024 * 1024 + 1])
def test_a_length_out_of_bounds_is_refused(total: int) -> None:
    prelude = struct.pack(">II", total, 0)
    with pytest.raises(FramingError, match="a message of"):
        Decoder().feed(prelude + struct.pack(">I", zlib.crc32(prelude)))
