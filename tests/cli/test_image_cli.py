"""`fuseforks image inspect` over real files: images, base64 text, and a saved MCP tool result."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.images.normalize import normalize_image
from fuseforks.images.types import NormalizedImage
from tests.helpers import imagegen as gen


def run(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["image", "inspect", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_lines_for_pass_through_re_encode_and_drop(tmp_path: Path) -> None:
    jpeg = gen.jpeg(640, 424)
    png = gen.encode(gen.photo(3000, 2000), "PNG")
    (tmp_path / "cam.jpg").write_bytes(jpeg)
    (tmp_path / "shot.png").write_bytes(png)
    (tmp_path / "anim.gif").write_bytes(gen.encode(gen.photo(30, 20), "GIF"))
    (tmp_path / "layers.psd").write_bytes(b"8BPS\x00\x01" + b"\x00" * 20)
    reencoded = normalize_image(png)
    gif = normalize_image(gen.encode(gen.photo(30, 20), "GIF"))
    assert isinstance(reencoded, NormalizedImage) and isinstance(gif, NormalizedImage)
    lines = run(str(tmp_path / "cam.jpg"), str(tmp_path / "shot.png"), str(tmp_path / "anim.gif"),
                str(tmp_path / "layers.psd"))
    assert lines == [
        (
            f"{tmp_path}/cam.jpg: pass_through format=JPEG->JPEG bytes={len(jpeg)}->{len(jpeg)}"
            f" px=640x424 sha256={hashlib.sha256(jpeg).hexdigest()}"
        ),
        (
            f"{tmp_path}/shot.png: re_encoded format=PNG->JPEG bytes={len(png)}->{reencoded.size}"
            f" px=1568x1045 sha256={reencoded.digest}"
        ),
        (
            f"{tmp_path}/anim.gif: re_encoded format=GIF->WEBP bytes=1485->{gif.size}"
            f" px=30x20 sha256={gif.digest}"
        ),
        (
            f"{tmp_path}/layers.psd: dropped reason=unsupported_format format=PSD"
            " detail='PSD is not carried'"
        ),
    ]


def test_a_file_of_base64_text_is_read_as_an_mcp_block(tmp_path: Path) -> None:
    jpeg = gen.jpeg(100, 50)
    (tmp_path / "block.txt").write_text(base64.b64encode(jpeg).decode() + "\n")
    (tmp_path / "broken.txt").write_text("QUJ\n")
    (tmp_path / "notes.txt").write_text("Notes for the meeting\n")
    lines = run(str(tmp_path / "block.txt"), str(tmp_path / "broken.txt"),
                str(tmp_path / "notes.txt"))
    assert lines == [
        (
            f"{tmp_path}/block.txt: pass_through format=JPEG->JPEG bytes={len(jpeg)}->{len(jpeg)}"
            f" px=100x50 sha256={hashlib.sha256(jpeg).hexdigest()}"
        ),
        f"{tmp_path}/broken.txt: dropped reason=unreadable format=- detail='text that is not "
        "an image, nor valid base64 of one'",
        f"{tmp_path}/notes.txt: dropped reason=unreadable format=- detail='text that is not "
        "an image, nor valid base64 of one'",
    ]


def test_a_saved_tool_result_shows_each_block_its_claim_and_the_cap(tmp_path: Path) -> None:
    jpegs = [gen.jpeg(64 + i, 48, seed=i) for i in range(5)]
    content = [{"type": "text", "text": "five frames"}] + [
        {"type": "image", "data": base64.b64encode(j).decode(), "mimeType": "image/png"}
        for j in jpegs
    ]
    response = {"jsonrpc": "2.0", "id": 3, "result": {"content": content, "isError": False}}
    (tmp_path / "result.json").write_text(json.dumps(response))
    lines = run(str(tmp_path / "result.json"))
    expected = [
        f"{tmp_path}/result.json#{i}: pass_through claimed=image/png format=JPEG->JPEG"
        f" bytes={len(j)}->{len(j)} px={64 + i}x48 sha256={hashlib.sha256(j).hexdigest()}"
        for i, j in enumerate(jpegs[:4])
    ]
    expected.append(
        f"{tmp_path}/result.json#4: dropped claimed=image/png reason=too_many format=JPEG"
        " detail='more than 4 images in one result'"
    )
    assert lines == expected


def test_json_output_carries_every_field_and_never_the_bytes(tmp_path: Path) -> None:
    jpeg = gen.jpeg(80, 60)
    (tmp_path / "a.jpg").write_bytes(jpeg)
    (tmp_path / "b.bin").write_bytes(b"\x00not an image")
    result = CliRunner().invoke(
        main, ["image", "inspect", "--json", str(tmp_path / "a.jpg"), str(tmp_path / "b.bin")]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [
        {
            "file": f"{tmp_path}/a.jpg",
            "outcome": "kept",
            "path": "pass_through",
            "source_format": "JPEG",
            "media_type": "image/jpeg",
            "source_size": len(jpeg),
            "size": len(jpeg),
            "width": 80,
            "height": 60,
            "digest": hashlib.sha256(jpeg).hexdigest(),
        },
        {
            "file": f"{tmp_path}/b.bin",
            "outcome": "dropped",
            "reason": "unreadable",
            "detail": "bytes of no known image format",
        },
    ]
    assert base64.b64encode(jpeg).decode()[:40] not in result.output


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["image", "inspect", str(tmp_path / "nope.png")])
    assert (result.exit_code, result.stdout) == (2, "")
    [line] = result.stderr.splitlines()  # click's words, in fuseforks' frame
    assert line.startswith("Error: ") and line.endswith(" Try 'fuseforks image inspect --help'.")
    assert str(tmp_path / "nope.png") in line


def test_image_is_listed_among_the_commands() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "image" in result.output.split("Commands:")[1]


def test_a_truncated_file_says_how_it_is_cut(tmp_path: Path) -> None:
    webp = gen.encode(gen.photo(300, 200), "WEBP", quality=80)
    png = gen.encode(gen.photo(200, 150), "PNG")
    jpeg = gen.jpeg(800, 600)
    (tmp_path / "cut.webp").write_bytes(webp[:2000])
    (tmp_path / "cut.png").write_bytes(png[:20_000])
    (tmp_path / "cut.jpg").write_bytes(jpeg[: len(jpeg) // 2])
    lines = run(str(tmp_path / "cut.webp"), str(tmp_path / "cut.png"), str(tmp_path / "cut.jpg"))
    assert lines == [
        f"{tmp_path}/cut.webp: dropped reason=unreadable format=WEBP"
        f" detail='truncated: 2,000 of {len(webp):,} bytes'",
        f"{tmp_path}/cut.png: dropped reason=unreadable format=PNG"
        f" detail='truncated: 20,000 of at least {len(png) - 12:,} bytes (cut in its IDAT chunk)'",
        f"{tmp_path}/cut.jpg: dropped reason=unreadable format=JPEG"
        f" detail='truncated: {len(jpeg) // 2:,} bytes, no end of image after its scan'",
    ]


def test_a_file_holding_a_data_url_is_read_as_its_image(tmp_path: Path) -> None:
    jpeg = gen.jpeg(100, 50)
    digest = hashlib.sha256(jpeg).hexdigest()
    encoded = base64.b64encode(jpeg).decode()
    (tmp_path / "a.txt").write_text(f"data:image/png;base64,{encoded}\n")
    (tmp_path / "b.txt").write_text(f"DATA:image/jpeg;name=cam.jpg;base64,{encoded}")
    (tmp_path / "c.txt").write_text("data:image/jpeg," + "".join(f"%{b:02X}" for b in jpeg))
    (tmp_path / "d.txt").write_text("data:,not%20an%20image")
    lines = run(*(str(tmp_path / f"{name}.txt") for name in "abcd"))
    same = f"format=JPEG->JPEG bytes={len(jpeg)}->{len(jpeg)} px=100x50 sha256={digest}"
    assert lines == [
        f"{tmp_path}/a.txt: pass_through claimed=image/png {same}",
        f"{tmp_path}/b.txt: pass_through claimed=image/jpeg {same}",
        f"{tmp_path}/c.txt: pass_through claimed=image/jpeg {same}",
        f"{tmp_path}/d.txt: dropped reason=unreadable format=- detail='bytes of no known image"
        " format'",
    ]


def test_base64_text_wrapped_or_spaced_is_read(tmp_path: Path) -> None:
    jpeg = gen.jpeg(60, 40)
    encoded = base64.b64encode(jpeg).decode()
    (tmp_path / "mime.txt").write_text(
        "\r\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76)) + "\r\n"
    )
    (tmp_path / "spaced.txt").write_text(" ".join(encoded[i : i + 8] for i in range(0, len(encoded), 8)))
    digest = hashlib.sha256(jpeg).hexdigest()
    assert run(str(tmp_path / "mime.txt"), str(tmp_path / "spaced.txt")) == [
        f"{tmp_path}/{name}: pass_through format=JPEG->JPEG bytes={len(jpeg)}->{len(jpeg)}"
        f" px=60x40 sha256={digest}"
        for name in ("mime.txt", "spaced.txt")
    ]


def test_a_tool_result_without_images_says_so(tmp_path: Path) -> None:
    result = {"content": [{"type": "text", "text": "ready"},
                          {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}]}
    (tmp_path / "text.json").write_text(json.dumps(result))
    (tmp_path / "rpc.json").write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}})
    )
    assert run(str(tmp_path / "text.json"), str(tmp_path / "rpc.json")) == [
        f"{tmp_path}/text.json: no images: the tool result has no image blocks"
        " (2 blocks: text, resource)",
        f"{tmp_path}/rpc.json: no images: the tool result has no image blocks (0 blocks: none)",
    ]
    out = CliRunner().invoke(main, ["image", "inspect", "--json", str(tmp_path / "text.json")])
    assert json.loads(out.output) == [{
        "file": f"{tmp_path}/text.json", "outcome": "no_images",
        "detail": "the tool result has no image blocks (2 blocks: text, resource)",
    }]
