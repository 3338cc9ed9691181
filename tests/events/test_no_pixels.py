"""No event can hold image bytes: by its types, and by the guard at sealing and storing — while
every text that is not media (checksums, identifiers, tokens, base64 of text) stays byte-identical."""

from __future__ import annotations

import base64
import io
import json
import random
import string

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from fuseforks.core.canonical import Usage
from fuseforks.core.signatures import RECOGNIZED_IMAGE_SIGNATURES, sniff_format
from fuseforks.events.codec import Envelope, encode_event
from fuseforks.events.privacy import (
    BLOB_RUN_CHARS,
    PixelLeakError,
    elide_base64,
    find_pixel_leak,
    media_spans,
)
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import (
    EVENT_TYPES,
    ImageMeta,
    ResponseReceived,
    ToolCallRecord,
    ToolResultRecorded,
    TurnStarted,
)
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.sqlite import SqliteStore
from tests.events.media_samples import media

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
                if isinstance(info, msgspec.inspect.NoneType):
                    continue  # an optional digest (a read that failed has none)
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


# --- legitimate text stays byte-identical ---------------------------------------------------------

IDENTIFIER = string.ascii_letters + string.digits + "_"
CHECKSUM = "".join(random.Random(256).choices("0123456789abcdef", k=256))


def hex_run(rng: random.Random, n: int) -> str:
    return rng.randbytes(n // 2 + 1).hex()[:n]


def identifier_run(rng: random.Random, n: int) -> str:
    return rng.choice(string.ascii_letters + "_") + "".join(rng.choices(IDENTIFIER, k=n - 1))


def text_of(rng: random.Random, n: int) -> str:
    """Prose in several scripts (ASCII, Latin-1, CJK) — what base64 of text usually carries."""
    alphabet = string.ascii_letters + string.digits + " .,;:?!'\\n" + "éàçüß©°½" + "日本語の文字列中文"
    return "".join(rng.choices(alphabet, k=n))


def base64_of_text(rng: random.Random, n: int, url_safe: bool, padded: bool) -> str:
    raw = text_of(rng, n * 3 // 4 + 4).encode()
    encoded = (base64.urlsafe_b64encode if url_safe else base64.b64encode)(raw).decode()
    encoded = encoded[: max(4, n // 4 * 4)] if padded else encoded[:n]
    return encoded if padded else encoded.rstrip("=")


def jwt_like(rng: random.Random, n: int) -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    header = part(b'{"alg":"RS256","typ":"JWT","kid":"k-1"}')
    words = "".join(rng.choices(string.ascii_letters + "  ", k=max(1, n // 2)))
    claims = {"sub": identifier_run(rng, 12), "scope": words}
    signature = part(rng.randbytes(rng.choice([32, 64, 256, 512])))
    return f"{header}.{part(json.dumps(claims).encode())}.{signature}"


def legitimate(kind: str, n: int, seed: int) -> str:
    rng = random.Random(seed)
    if kind == "hex":
        return hex_run(rng, n)
    if kind == "identifier":
        return identifier_run(rng, n)
    if kind == "jwt":
        return jwt_like(rng, n)
    url_safe, padded = kind.endswith("url-safe"), kind.startswith("padded")
    return base64_of_text(rng, n, url_safe, padded)


KINDS = ["hex", "identifier", "jwt", "padded base64 of text", "base64 of text url-safe",
         "padded base64 of text url-safe", "base64 of text"]
AROUND = st.sampled_from([("", ""), ("checksum: ", "\\n"), ('{"token": "', '"}'), ("x ", " y"),
                          ("see\\n", "\\nend"), ("(", ")")])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), n=st.integers(1, 60_000), seed=st.integers(0, 2**32),
       around=AROUND)
def test_long_runs_that_are_not_media_pass_byte_identical(
    kind: str, n: int, seed: int, around: tuple[str, str]
) -> None:
    text = around[0] + legitimate(kind, n, seed) + around[1]
    assert elide_base64(text) == text
    event = TurnStarted(agent="a", wire="anthropic", model="m", endpoint_host="h", language="en",
                        request=text, max_rounds=8, image_cap=20, placement="native",
                        summary_instruction="s")
    assert find_pixel_leak(encode_event(event)) is None
    (sealed,) = Sequencer("t", FixedClock()).seal([event])
    assert sealed.event == event


@pytest.mark.parametrize("n", [1, 199, 200, 256, 4096, 60_000, BLOB_RUN_CHARS - 1])
@pytest.mark.parametrize("kind", KINDS)
def test_fixed_lengths_of_every_kind_pass(kind: str, n: int) -> None:
    text = legitimate(kind, n, seed=n)
    assert elide_base64(text) == text
    assert media_spans(text) == []


def test_the_words_the_old_guard_corrupted_now_pass() -> None:
    """The former rule replaced any 200+ character run; each of these reached the model as
    `[base64 omitted: N characters]`."""
    texts = [
        f"Verify the download against this checksum: {CHECKSUM}",
        "A" * 300,
        "/work/main/" + "a" * 300,
        "sha512-" + base64.b64encode(bytes(range(64))).decode() * 4,
    ]
    for text in texts:
        assert elide_base64(text) == text
        assert find_pixel_leak(encode_event(result_with(text))) is None


def test_a_gemini_thought_signature_is_kept_in_its_pieces() -> None:
    signature = base64.b64encode(random.Random(3).randbytes(3000)).decode()
    pieces = [signature[i : i + 76] for i in range(0, len(signature), 76)]
    event = ResponseReceived(round=1, usage=Usage(), tool_calls=[
        ToolCallRecord(call_id="c", name="t", signature=pieces)])
    (sealed,) = Sequencer("t", FixedClock()).seal([event])
    assert "".join(sealed.event.tool_calls[0].signature) == signature


# --- media is caught wherever it appears ---------------------------------------------------------

MEDIA = media()
IMAGE_FAMILIES = {
    "JPEG": "JPEG", "JPEG (EXIF)": "JPEG", "PNG": "PNG", "GIF": "GIF", "WEBP": "WEBP",
    "WEBP (lossless)": "WEBP", "BMP": "BMP", "TIFF": "TIFF", "TIFF (big-endian)": "TIFF",
    "ICO": "ICO", "CUR": "CUR", "PSD": "PSD", "JPEG2000 (jp2)": "JPEG2000",
    "JPEG2000 (j2k)": "JPEG2000", "JXL (container)": "JXL", "JXL (codestream)": "JXL",
    "QOI": "QOI", "DDS": "DDS", "ICNS": "ICNS", "PDF": "PDF", "SVG": "SVG",
    "SVG (xml prolog)": "SVG", "AVIF": "AVIF", "HEIC": "HEIF",
}
EXPECTED_KIND = {
    "JPEG": "JPEG image", "JPEG (EXIF)": "JPEG image", "PNG": "PNG image", "GIF": "GIF image",
    "WEBP": "WebP image", "WEBP (lossless)": "WebP image", "BMP": "BMP image",
    "TIFF": "TIFF image", "TIFF (big-endian)": "TIFF image", "ICO": "ICO image",
    "CUR": "CUR image", "PSD": "PSD image", "JPEG2000 (jp2)": "JPEG 2000 image",
    "JPEG2000 (j2k)": "JPEG 2000 image", "JXL (container)": "JPEG XL image",
    "JXL (codestream)": "JPEG XL image", "QOI": "QOI image", "DDS": "DDS image",
    "ICNS": "ICNS image", "PDF": "PDF document", "SVG": "SVG image",
    "SVG (xml prolog)": "SVG image", "AVIF": "ISO media (avif)", "HEIC": "ISO media (heic)",
    "WAV": "WAV audio", "MP3 (ID3)": "MP3 audio", "MP3 (frames)": "MP3/AAC audio",
    "AAC (ADTS)": "MP3/AAC audio", "OGG": "OGG media", "FLAC": "FLAC audio",
    "AIFF": "AIFF audio", "MP4": "ISO media (isom)", "MOV": "ISO media (qt)",
    "WEBM": "Matroska/WebM media", "AVI": "AVI video",
}


def test_the_samples_cover_every_image_format_the_project_knows() -> None:
    known = {name for _, _, name in RECOGNIZED_IMAGE_SIGNATURES} | {"JPEG", "PNG", "WEBP",
                                                                  "HEIF", "AVIF"}
    assert set(IMAGE_FAMILIES.values()) == known
    for sample, family in IMAGE_FAMILIES.items():
        assert sniff_format(MEDIA[sample][:32]) == family, sample
    assert set(EXPECTED_KIND) == set(MEDIA)


def encodings(data: bytes) -> dict[str, str]:
    std = base64.b64encode(data).decode()
    url = base64.urlsafe_b64encode(data).decode()
    return {
        "standard": std,
        "standard, no padding": std.rstrip("="),
        "url-safe": url,
        "url-safe, no padding": url.rstrip("="),
        "MIME lines of 76, CRLF": "\r\n".join(std[i : i + 76] for i in range(0, len(std), 76)),
        "PEM lines of 64": "\n".join(std[i : i + 64] for i in range(0, len(std), 64)),
        "YAML !!binary lines of 23, indented": "\n  ".join(
            std[i : i + 23] for i in range(0, len(std), 23)
        ),
        "data: URL": "data:application/octet-stream;base64," + std,
    }


# A bare JPEG XL codestream has a two-byte signature: it is recognised in the standard alphabet at
# the start of a run only. The text signatures (`<svg`, `<?xml`, `%PDF-`) count only where a base64
# text begins, since the base64 of a web page may hold them in its middle. Neither is found glued
# to the end of a word.
BARE_JXL_MISSED = {"url-safe", "url-safe, no padding"}
GLUE_MISSED = {"JXL (codestream)", "SVG", "SVG (xml prolog)", "PDF"}
WRAPPED = {"MIME lines of 76, CRLF", "PEM lines of 64", "YAML !!binary lines of 23, indented"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(sorted(MEDIA)),
    encoding=st.sampled_from(sorted(encodings(b"x"))),
    before=st.sampled_from(["", "Here it is: ", "frame ", "frame:", "line one\nline two\n",
                            '{"image": "', "x" * 500 + " "]),
    after=st.sampled_from(["", " and more text", ". Done.", '"}', ")\n", "\n\nNext paragraph",
                           "\n- item", ", then"]),
    glue=st.booleans(),
)
def test_media_is_caught_at_the_start_middle_and_end_of_a_text(
    sample: str, encoding: str, before: str, after: str, glue: bool
) -> None:
    if (sample == "JXL (codestream)" and encoding in BARE_JXL_MISSED) or (
        glue and sample in GLUE_MISSED
    ):
        return
    if encoding in WRAPPED and after[:1] in (" ", "."):
        # A wrapped block ends its last line; words on that line after a last line shorter than
        # 4 characters cannot be told from it (see `_span_end`), so such layouts are not drawn.
        after = "\n" + after
    encoded = encodings(MEDIA[sample])[encoding]
    prefix = before + ("ab" if glue else "")
    text = prefix + encoded + after
    kept = "data:application/octet-stream;base64," if encoding == "data: URL" else ""
    omitted = len(encoded) - len(kept)
    assert elide_base64(text) == f"{prefix}{kept}[base64 omitted: {omitted} characters]{after}"
    ((start, end, kind),) = media_spans(text)
    assert (start, end, kind) == (len(prefix) + len(kept), len(prefix) + len(encoded),
                                  EXPECTED_KIND[sample])
    leak = find_pixel_leak(encode_event(result_with(text)))
    assert leak == f"a base64 run of {omitted} characters with the signature of a {kind}"
    assert find_pixel_leak(encode_event(result_with(elide_base64(text)))) is None


@pytest.mark.parametrize("sample", sorted(MEDIA))
def test_every_sample_in_every_encoding_alone(sample: str) -> None:
    for encoding, encoded in encodings(MEDIA[sample]).items():
        if sample == "JXL (codestream)" and encoding in BARE_JXL_MISSED:
            continue
        kept = "data:application/octet-stream;base64," if encoding == "data: URL" else ""
        assert elide_base64(encoded) == f"{kept}[base64 omitted: {len(encoded) - len(kept)} characters]"


def test_two_images_between_words_are_each_replaced() -> None:
    jpeg, png = (base64.b64encode(MEDIA[k]).decode() for k in ("JPEG", "PNG"))
    text = f"left {jpeg} middle {png} right"
    assert elide_base64(text) == (
        f"left [base64 omitted: {len(jpeg)} characters] middle "
        f"[base64 omitted: {len(png)} characters] right"
    )


def test_wrapped_base64_inside_json_text_is_caught_across_escaped_newlines() -> None:
    """Tool arguments are recorded as JSON text, where a line break is the two characters `\\n`."""
    std = base64.b64encode(MEDIA["PNG"]).decode()
    wrapped = "\n".join(std[i : i + 76] for i in range(0, len(std), 76))
    arguments = json.dumps({"image": wrapped, "note": "ok"})
    escaped = json.dumps(wrapped)[1:-1]
    assert elide_base64(arguments) == (
        f'{{"image": "[base64 omitted: {len(escaped)} characters]", "note": "ok"}}'
    )


def test_a_run_of_64_kib_is_a_blob_whatever_it_decodes_to() -> None:
    rng = random.Random(64)
    below = identifier_run(rng, BLOB_RUN_CHARS - 1)
    at = identifier_run(rng, BLOB_RUN_CHARS)
    assert elide_base64(f"a {below} b") == f"a {below} b"
    assert elide_base64(f"a {at} b") == f"a [base64 omitted: {BLOB_RUN_CHARS} characters] b"
    assert find_pixel_leak(encode_event(result_with(at))) == (
        f"a base64 run of {BLOB_RUN_CHARS} characters (a blob: {BLOB_RUN_CHARS}+ characters)"
    )


@pytest.mark.parametrize("sample", sorted(GLUE_MISSED))
def test_text_signatures_and_a_bare_jpeg_xl_glued_to_a_word_are_left(sample: str) -> None:
    text = "ab" + base64.b64encode(MEDIA[sample]).decode()
    assert elide_base64(text) == text


def test_the_base64_of_a_web_page_holding_svg_and_riff_words_is_text() -> None:
    page = ("<html><body><p>RIFF files and GIF89a notes</p><svg width='1'></svg>"
            "<p>%PDF-1.7 is a version</p></body></html>\n") * 40
    for offset in range(3):
        encoded = base64.b64encode((" " * offset + page).encode()).decode()
        wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
        assert elide_base64(encoded) == encoded
        assert elide_base64(wrapped) == wrapped


def test_a_truncated_image_prefix_is_still_caught_and_a_url_is_not() -> None:
    fragment = jpeg_base64()[:60]
    assert elide_base64(f"cut: {fragment}") == "cut: [base64 omitted: 60 characters]"
    # Under 32 characters (24 bytes) no image file fits: a mention in documentation stays.
    mention = "For example `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA...`"
    assert elide_base64(mention) == mention
    assert elide_base64("https://example.com/9j/4AAQ/index") == "https://example.com/9j/4AAQ/index"
    assert elide_base64("see /work/main/tests/mcp/servers") == "see /work/main/tests/mcp/servers"


def test_no_signature_spelling_is_lowercase_hex_so_digests_are_skipped_safely() -> None:
    """The quick path of `find_pixel_leak` skips hex runs; that holds only while no signature's
    base64 spelling can be written in lowercase hex digits."""
    import os

    from fuseforks.events import privacy

    assert not any(privacy._CANDIDATE.search(os.urandom(64).hex()) for _ in range(20_000))
