"""The README's picture of a turn page: `python -m tests.console.screenshot [PNG]`.

Runs the offline demo into a fresh folder, serves its store with `fuseforks console`, opens the
gemini-2.5 turn (a refusal of the native placement, the ladder step, the alternate placement
received) in the distribution's Chromium and saves the whole page (default:
docs/console-turn.png).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.console.browser import chromium
from tests.console.servers import SERVING, environment, stop
from tests.helpers import processes

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else ROOT / "docs" / "console-turn.png"
    with tempfile.TemporaryDirectory() as folder:
        fuseforks = [sys.executable, "-m", "fuseforks"]
        processes.run([*fuseforks, "demo"], cwd=folder, check=True, env=environment(),
                      stdout=subprocess.DEVNULL, timeout=600)
        listed = processes.run([*fuseforks, "turns", "fuseforks.db", "--json"], cwd=folder,
                               check=True, capture_output=True, text=True, timeout=120)
        (turn_id,) = [t["turn_id"] for t in json.loads(listed.stdout)
                      if t["model"] == "gemini-2.5-flash"]
        console = processes.spawn([*fuseforks, "console", "--port", "0"], cwd=folder,
                                  stdout=subprocess.PIPE, text=True, env=environment())
        try:
            assert console.stdout is not None
            line = console.stdout.readline()
            assert line.startswith(SERVING), line
            url = line.strip().rsplit(" on ", 1)[1]
            with chromium() as browser:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{url}turns/{turn_id}")
                page.screenshot(path=str(target), full_page=True)
        finally:
            stop(console)
    print(f"saved {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
