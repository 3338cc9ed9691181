"""`fuseforks mcp tools` and `fuseforks mcp call` against real server processes."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.demo.camera import frame_text, render_frame
from tests.helpers import processes
from tests.mcp.conftest import REPO, SERVERS, http_server
from tests.mcp.servers import pictures

PY = sys.executable


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_call_prints_the_text_then_one_line_per_image() -> None:
    code, out, _ = run("mcp", "call", "--", PY, "-m", "fuseforks.demo.camera", "live_view_image")
    frame = render_frame(1)
    digest = hashlib.sha256(frame).hexdigest()
    assert code == 0
    assert out == (
        f"{frame_text(1, frame)}\nimage 1: JPEG 640x424 5 KB sha256={digest} passed through\n"
    )


def test_call_reports_re_encoding_and_drops() -> None:
    code, out, _ = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "gif")
    assert code == 0
    assert out.splitlines()[:2] == [
        "an animation", "(image 1 is the first frame of an animation of 3 frames)"]
    assert out.splitlines()[2].startswith("image 1: WEBP 40x30 ")
    code, out, _ = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "svg")
    assert code == 0
    assert out == (
        "(image 1 was not sent: its format is not supported)\n"
        "dropped image 1: SVG unsupported_format (SVG is not carried)\n"
    )
    code, out, _ = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "png_alpha")
    lines = out.splitlines()
    assert lines[0] == "(1 image)"
    assert lines[1].startswith("image 1: WEBP 200x100 ")
    assert lines[1].endswith(" re-encoded from PNG 1 KB")


def test_call_json_passes_arguments_and_never_prints_bytes() -> None:
    code, out, _ = run(
        "mcp", "call", "--json", "--", PY, str(SERVERS / "faulty.py"), "add", '{"a": 2, "b": 40}'
    )
    assert code == 0
    assert json.loads(out) == {
        "text": "42",
        "is_error": False,
        "fault": None,
        "images": [],
        "dropped": [],
    }
    code, out, _ = run("mcp", "call", "--json", "--", PY, str(SERVERS / "content.py"), "jpeg")
    (image,) = json.loads(out)["images"]
    assert (image["format"], image["path"], image["width"]) == ("JPEG", "pass_through", 320)
    assert "/9j/" not in out  # the base64 of a JPEG starts so


def test_call_in_another_language_and_exit_status_of_an_error() -> None:
    code, out, _ = run(
        "mcp", "call", "--language", "ja", "--", PY, str(SERVERS / "content.py"), "is_error"
    )
    assert (code, out) == (1, "ツールはエラーを返しました: camera busy\n")


def test_call_fault_exits_2_with_the_reason() -> None:
    code, out, err = run("mcp", "call", "--", "/nonexistent/fuseforks-no-such-server", "x")
    assert (code, out) == (2, "")
    assert err == (
        "fault: server 'fuseforks-no-such-server' could not be started: "
        "command not found: '/nonexistent/fuseforks-no-such-server'\n"
    )


def test_tools_lists_prefixed_names_and_faults(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "nik": {
                        "command": PY,
                        "args": ["-m", "fuseforks.demo.camera"],
                        "cwd": str(REPO),
                    },
                    "ghost": {"command": "/nonexistent/fuseforks-no-such-server"},
                }
            }
        )
    )
    code, out, err = run("mcp", "tools", "--config", str(config))
    assert out == (
        "nik__live_view_image\tTake one frame of the live view: a 640x424 JPEG and a JSON line "
        "with its size and seq.\n"
        "nik__camera_status\tWhether the camera is connected and how many frames it has taken "
        "(text only).\n"
    )
    assert err == (
        "fault: server 'ghost' could not be started: command not found: "
        "'/nonexistent/fuseforks-no-such-server'\n"
    )
    assert code == 1
    code, out, _ = run("mcp", "call", "--config", str(config), "nik__camera_status")
    assert code == 0 and out.startswith('{"connected":true,')


def test_call_shows_the_text_the_model_reads_media_in_text_replaced() -> None:
    """The engine records and sends a text block's base64 image as the marker; so does `call`."""
    data = base64.b64encode(pictures.solid_jpeg((255, 0, 0))).decode()
    code, out, _ = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "jpeg_as_text")
    assert (code, out) == (0, f"frame: [base64 omitted: {len(data)} characters] (red)\n")
    code, out, _ = run("mcp", "call", "--json", "--", PY, str(SERVERS / "content.py"),
                       "jpeg_as_text")
    assert json.loads(out)["text"] == f"frame: [base64 omitted: {len(data)} characters] (red)"


def test_call_keeps_long_words_and_shows_text_resources() -> None:
    code, out, _ = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "long_words")
    assert (code, out) == (0, pictures.LONG_WORDS + "\n")
    code, out, _ = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "embedded_text")
    assert (code, out) == (0, "[resource file:///tmp/notes.txt]\ninner notes\n")


def test_call_over_the_sse_transport() -> None:
    with http_server([str(SERVERS / "content.py")], transport="sse") as url:
        code, out, _ = run("mcp", "call", "--url", url, "--transport", "sse", "text_only")
    assert (code, out) == (0, "line one\nline two\n")


def test_tools_start_timeout_and_progress_while_waiting(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "stuck": {"command": PY, "args": [str(SERVERS / "hang_at_init.py")]},
    }}))
    code, out, err = run("mcp", "tools", "--config", str(config), "--mcp-start-timeout", "1")
    assert (code, out, err) == (
        1, "", "fault: server 'stuck' did not complete the MCP handshake within 1 s\n"
    )
    config.write_text(json.dumps({"mcpServers": {
        "slow": {"command": PY, "args": [str(SERVERS / "slow_start.py")],
                 "env": {"SLOW_START_SECONDS": "5.5"}},
    }}))
    code, out, err = run("mcp", "tools", "--config", str(config))
    assert (code, out) == (0, "slow__ping\tAnswer pong.\n")
    # One line every 5 s while it starts: at least the first; more on a busy machine.
    lines = err.splitlines()
    assert lines[:1] == ["waiting for server 'slow' to start (5 s)"]
    assert lines == [f"waiting for server 'slow' to start ({5 * n} s)"
                     for n in range(1, len(lines) + 1)]


def test_a_start_timeout_must_be_positive() -> None:
    result = CliRunner().invoke(main, ["mcp", "call", "--mcp-start-timeout", "0", "--", PY, "x"])
    assert (result.exit_code, result.stdout) == (2, "")
    [line] = result.stderr.splitlines()  # click's words, in fuseforks' frame
    assert line.startswith("Error: ") and line.endswith(" Try 'fuseforks mcp call --help'.")
    assert "--mcp-start-timeout" in line


def test_call_to_a_url_that_cannot_be_reached_says_so() -> None:
    from tests.helpers.ports import free_port

    port = free_port()  # nothing listens there
    url = f"http://127.0.0.1:{port}/mcp"
    code, out, err = run("mcp", "call", "--url", url, "anything")
    assert code == 2
    assert out == ""
    assert err.startswith(f"fault: server '127.0.0.1:{port}' could not be reached at {url}: ")
    assert "Tool returned an error" not in err


def test_an_unknown_tool_is_named_as_typed() -> None:
    code, out, err = run("mcp", "call", "--", PY, str(SERVERS / "content.py"), "no_such_tool")
    assert (code, out) == (2, "")
    assert err.startswith("fault: unknown tool 'no_such_tool' (the server offers: text_only, jpeg, ")
def test_a_reader_that_stops_early_ends_the_listing_quietly(tmp_path: Path) -> None:
    """`mcp tools … | head -2` on a listing longer than a pipe holds: the two lines, then a
    quiet end — no broken-pipe traceback."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"many": {
        "command": PY, "args": [str(SERVERS / "many_tools.py")]}}}))
    done = processes.run(
        ["bash", "-c", f"set -o pipefail; {PY} -m fuseforks mcp tools --config {config} | head -2"],
        capture_output=True, text=True, timeout=300)
    assert done.stdout.splitlines() == [
        "many__tool_0000\tTool number 0, one of very many, each saying so at length.",
        "many__tool_0001\tTool number 1, one of very many, each saying so at length."]
    assert done.returncode == 1
    assert all(line.startswith("waiting for server 'many' to start (")  # 3,000 tools take time
               for line in done.stderr.splitlines()), done.stderr
