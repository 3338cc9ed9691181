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
    assert lines[0].startswith("I see 1 image. image 1: left half red, right half green")
    assert re.fullmatch(r"sent JPEG \d+ B \(native\) from camera__live_view_image", lines[1])
    assert lines[-1].startswith("tokens: ")
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
