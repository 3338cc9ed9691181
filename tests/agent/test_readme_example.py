"""The README's Python example runs as written and does what the README says."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.helpers import processes

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_runs_as_written(tmp_path: Path) -> None:
    text = README.read_text()
    (code,) = re.findall(r"<!-- example: agent -->\n```python\n(.*?)```\n<!-- /example -->",
                         text, re.S)
    script = tmp_path / "example.py"
    script.write_text(code)
    done = processes.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first = "I see 1 image. image 1: left half red, right half green."
    second = "I see 1 image. image 1: left half green, right half blue."
    assert lines[0] == first
    assert re.fullmatch(r"sent JPEG \d+ B \(native\) from camera__live_view_image", lines[1])
    assert lines[2] == second  # the camera's next frame: no earlier image is sent again
    assert re.fullmatch(r"tokens: \d+ in, \d+ out", lines[3])
    assert lines[4:] == [f"carried: 'Take one live view and describe it.' -> {first!r}",
                         f"carried: 'Take another one.' -> {second!r}"]
    assert (tmp_path / "example.db").exists() and (tmp_path / "example.log").exists()


def test_the_readme_streaming_example_runs_as_written(tmp_path: Path) -> None:
    text = README.read_text()
    (code,) = re.findall(r"<!-- example: stream -->\n```python\n(.*?)```\n<!-- /example -->",
                         text, re.S)
    script = tmp_path / "stream.py"
    script.write_text(code)
    done = processes.run([sys.executable, "-u", str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "I see 1 image. image 1: left half red, right half green.",
        "[answered after 2 rounds]",
    ]
    assert (tmp_path / "stream.db").exists()


def test_the_readme_command_line_example_runs_as_printed(tmp_path: Path) -> None:
    """The shell lines as printed, in a folder whose `.venv` is this one; only the port is one
    free on this machine instead of 8400."""
    import os
    import socket

    text = README.read_text()
    (code,) = re.findall(r"<!-- example: cli -->\n```sh\n(.*?)```\n<!-- /example -->", text, re.S)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parents[1])
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and k not in ("VIRTUAL_ENV", "FUSEFORKS_DB")}
    done = processes.run(["bash", "-e", "-c", code.replace("8400", str(port))], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-3:] == [
        "tool: agent=agent round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "I see 1 image. image 1: left half red, right half green.",
        "turn: agent=agent backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=answered"]
    assert (tmp_path / "fuseforks.db").exists()
