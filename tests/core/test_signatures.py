"""The signatures and the JPEG marker walk both the image pipeline and the privacy guard read."""

from __future__ import annotations

import io

from PIL import Image

from fuseforks.core.signatures import JpegSegment, JpegWalk, sniff_format, walk_jpeg

APP0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
DQT = b"\xff\xdb\x00\x04\x00\x00"
SOS = b"\xff\xda\x00\x03\x00"


def test_a_walk_reads_each_segment_header_up_to_the_first_scan() -> None:
    data = b"\xff\xd8" + APP0 + b"\xff\xff" + DQT + SOS + b"\x12\x34\xff\xd9"
    assert walk_jpeg(data) == JpegWalk(
        [JpegSegment(0xE0, 4, 16), JpegSegment(0xDB, 24, 4), JpegSegment(0xDA, 30, 3)],
        "scan", 30)
    # a strict walk skips no fill byte: a marker starts exactly where a segment ends
    assert walk_jpeg(b"\xff\xd8" + APP0 + DQT + SOS, fill=False).stop == "scan"
    assert walk_jpeg(data, fill=False).segments[1].marker == 0xFF
    assert walk_jpeg(b"\xff\xd8" + APP0 + b"\x00" + DQT, fill=False) == JpegWalk(
        [JpegSegment(0xE0, 4, 16)], "not_a_marker", 20)


def test_a_walk_says_where_and_why_it_stopped_before_a_scan() -> None:
    head = b"\xff\xd8" + APP0
    assert walk_jpeg(head).stop == "end"
    assert walk_jpeg(head + b"\xff\xdb\x00") == JpegWalk([JpegSegment(0xE0, 4, 16)], "cut", 22)
    assert walk_jpeg(head + b"\xff\xd9").stop == "eoi"
    assert walk_jpeg(head + b"\xff\xdb\x00\x01").stop == "bad_length"
    assert walk_jpeg(head + DQT + SOS, limit=2) == JpegWalk(
        [JpegSegment(0xE0, 4, 16), JpegSegment(0xDB, 22, 4)], "limit", 26)
    restart = walk_jpeg(head + b"\xff\xd0" + SOS)
    assert [s.marker for s in restart.segments] == [0xE0, 0xD0, 0xDA]  # standalone: no length


def test_a_real_jpeg_walks_to_its_scan_and_its_segments_fit() -> None:
    out = io.BytesIO()
    Image.new("RGB", (9, 7), (200, 30, 30)).save(out, "JPEG")
    data = out.getvalue()
    walk = walk_jpeg(data)
    assert walk.stop == "scan" and all(s.end <= len(data) for s in walk.segments)
    assert sniff_format(data[:32]) == "JPEG"
