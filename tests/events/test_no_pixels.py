"""No event can hold image bytes or base64: by its types, and by the guard at sealing and storing."""

from __future__ import annotations

import base64
import io

import msgspec
import pytest
from PIL import Image

from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import PixelLeakError, elide_base64, find_pixel_leak
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import EVENT_TYPES, ImageMeta, ToolResultRecorded
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore

ALLOWED = (
    msgspec.inspect.StrType,
    msgspec.inspect.IntType,
    msgspec.inspect.BoolType,
    msgspec.inspect.NoneType,
    msgspec.inspect.LiteralType,
)


def leaves(info: msgspec.inspect.Type, path: str):
    match info:
        case msgspec.inspect.StructType():
            for field in info.fields:
                yield from leaves(field.type, f"{path}.{field.name}")
        case msgspec.inspect.ListType() | msgspec.inspect.TupleType() if hasattr(info, "item_type"):
            yield from leaves(info.item_type, f"{path}[]")
        case msgspec.inspect.UnionType():
            for member in info.types:
                yield from leaves(member, path)
        case _:
            yield path, info


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=lambda t: t.__name__)
def test_no_field_of_any_event_can_hold_bytes_or_arbitrary_objects(event_type) -> None:
    for path, info in leaves(msgspec.inspect.type_info(event_type), event_type.__name__):
        assert isinstance(info, ALLOWED), f"{path} is {type(info).__name__}: it could carry pixels"


def test_every_digest_field_is_constrained_to_sha256_hex() -> None:
    digest_fields = []
    for event_type in (*EVENT_TYPES, ImageMeta):
        for path, info in leaves(msgspec.inspect.type_info(event_type), event_type.__name__):
            if "digest" in path.split(".")[-1]:
                digest_fields.append(path)
                assert isinstance(info, msgspec.inspect.StrType)
                assert info.pattern == "^[0-9a-f]{64}$", path
    assert len(digest_fields) >= 5


def jpeg_base64() -> str:
    out = io.BytesIO()
    Image.new("RGB", (64, 64), (0, 200, 0)).save(out, "JPEG")
    return base64.b64encode(out.getvalue()).decode()


def result_with(body: str) -> ToolResultRecorded:
    return ToolResultRecorded(round=1, call_id="c", name="t", ok=True, body=body)


def test_sealing_refuses_a_body_that_holds_base64_image_data() -> None:
    sequencer = Sequencer("t", FixedClock())
    with pytest.raises(PixelLeakError, match=r"ToolResultRecorded.*base64 run"):
        sequencer.seal([result_with("here: " + jpeg_base64())])
    assert sequencer.last_seq == 0


def test_sealing_refuses_a_short_image_signature() -> None:
    with pytest.raises(PixelLeakError, match="signature"):
        Sequencer("t", FixedClock()).seal([result_with(jpeg_base64()[:60])])


def test_the_sqlite_store_refuses_to_write_base64_even_when_handed_an_envelope(tmp_path) -> None:
    envelope = Envelope(turn_id="t", seq=1, at="x", event=result_with(jpeg_base64()))
    with SqliteStore(tmp_path / "s.db") as store:
        with pytest.raises(PixelLeakError, match="refusing to store ToolResultRecorded #1"):
            store.append([envelope])
        assert store.read("t") == []


def test_ordinary_text_digests_and_json_pass() -> None:
    body = '{"height":424,"jpeg_bytes":21017,"seq":33985,"width":640} ' + "a" * 64
    assert find_pixel_leak(body.encode()) is None
    store = MemoryStore()
    store.append(Sequencer("t", FixedClock()).seal([result_with(body)]))
    assert store.read("t")[0].event == result_with(body)


def test_elide_base64_keeps_the_text_and_names_what_was_removed() -> None:
    data = jpeg_base64()
    assert elide_base64(f"frame: {data} end") == (
        f"frame: [base64 omitted: {len(data)} characters] end"
    )
    assert elide_base64("short abc+/= text") == "short abc+/= text"
